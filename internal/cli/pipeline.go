package cli

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// host is where this run reads its facts and config: --root, --config and
// this process's environment.
func (g *globals) host() hostplan.Host {
	return hostplan.Host{Root: g.hostRoot(), ConfigFile: g.configFile, Environ: os.Environ()}
}
