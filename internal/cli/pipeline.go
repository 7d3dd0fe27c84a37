package cli

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// host is where this run reads its facts and config: --root, --config and
// this process's environment.
func (g *globals) host() hostplan.Host {
	return hostplan.Host{Root: g.hostRoot(), ConfigFile: g.configFile, Environ: os.Environ()}
}

// loadDecision is hostplan.Load with a config error as a usage error (exit
// 2); adopt's call, kept in this shape for it.
func (g *globals) loadDecision(opts facts.Options) (facts.Facts, config.Config, decide.Decision, error) {
	p, err := hostplan.Load(g.host(), opts)
	if err != nil {
		err = usageError(err) // Config and Decision are zero, as Load leaves them
	}
	return p.Facts, p.Config, p.Decision, err
}
