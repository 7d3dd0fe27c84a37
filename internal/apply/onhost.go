package apply

import (
	"context"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// OnHost is apply as RKE2's ExecStartPre runs it for host: the plan for it
// (a config it cannot read is an UnknownIntent), RKE2_CONFIG_FILE from this
// process's environment, then Prepare. Every error is a usage error (exit
// 2); a run that could not be honoured is the Outcome's verdict. On k3s
// (host.Distribution, the one its caller found; when "", found from the
// units, or o.Distribution) the probe reads k3s's units, config and data
// dir and asks the k3s binary its version, and the environment's
// K3S_CONFIG_FILE moves the config.
func OnHost(ctx context.Context, host hostplan.Host, o PrepareOptions) (Outcome, error) {
	kind := host.Distribution
	if kind == "" {
		kind = distro.Find(host.Root, o.Distribution).Kind
	}
	host.Distribution, o.Distribution = kind, kind
	p, err := hostplan.Load(host, hostplan.Apply)
	if err != nil {
		return Outcome{}, UnknownIntent(err, kind.Name())
	}
	o.Root, o.ConfigEnv = host.Root, os.Getenv(kind.Profile().ConfigEnv)
	return Prepare(ctx, o, Input{Facts: p.Facts, Config: p.Config, Decision: p.Decision})
}
