package apply

import (
	"context"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// OnHost is apply as RKE2's ExecStartPre runs it for host: the plan for it
// (a config it cannot read is an UnknownIntent), RKE2_CONFIG_FILE from this
// process's environment, then Prepare. Every error is a usage error (exit
// 2); a run that could not be honoured is the Outcome's verdict.
func OnHost(ctx context.Context, host hostplan.Host, o PrepareOptions) (Outcome, error) {
	p, err := hostplan.Load(host, hostplan.Apply)
	if err != nil {
		return Outcome{}, UnknownIntent(err)
	}
	o.Root, o.ConfigEnv = host.Root, os.Getenv(EnvRKE2Config)
	return Prepare(ctx, o, Input{Facts: p.Facts, Config: p.Config, Decision: p.Decision})
}
