package cli

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// loadDecision is the front half every deciding subcommand shares (detect,
// generate, apply): probe the host under --root, load the operator config
// (--config under the same root, this process's environment, and the kernel
// command line the probe read), and decide.
//
// Facts never fail (missing or broken sources are in f.Problems and
// f.Unreadable; each caller chooses how strict to be about them). A config
// error is returned as a usage error (exit 2) that names the file or
// variable, the key and the value; f is valid even then.
func (g *globals) loadDecision(opts facts.Options) (facts.Facts, config.Config, decide.Decision, error) {
	root := g.hostRoot()
	f := facts.Probe(root, opts)
	c, err := config.Load(root, g.configFile, os.Environ(), f.Cmdline)
	if err != nil {
		return f, config.Config{}, decide.Decision{}, usageError(err)
	}
	return f, c, decide.Decide(f, c), nil
}
