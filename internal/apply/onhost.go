package apply

import (
	"context"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// EnvK3sConfig moves k3s's main config file, as RKE2_CONFIG_FILE does RKE2's.
const EnvK3sConfig = "K3S_CONFIG_FILE"

// OnHost is apply as RKE2's ExecStartPre runs it for host: the plan for it
// (a config it cannot read is an UnknownIntent), RKE2_CONFIG_FILE from this
// process's environment, then Prepare. Every error is a usage error (exit
// 2); a run that could not be honoured is the Outcome's verdict. On k3s
// (found, or o.Distribution) its config and data dir are probed, and the
// k3s binary is asked for its version, which decides the kube-proxy flags
// and prefer-bundled-bin.
func OnHost(ctx context.Context, host hostplan.Host, o PrepareOptions) (Outcome, error) {
	dist := distro.Find(host.Root, o.Distribution)
	host.Distribution, o.Distribution = dist.Kind, dist.Kind
	p, err := hostplan.Load(host, hostplan.Apply)
	if err != nil {
		return Outcome{}, UnknownIntent(err)
	}
	o.Root, o.ConfigEnv = host.Root, os.Getenv(EnvRKE2Config)
	if dist.Kind == distro.K3s {
		o.ConfigEnv = os.Getenv(EnvK3sConfig)
		k3sVersion(ctx, o, dist, &p)
	}
	return Prepare(ctx, o, Input{Facts: p.Facts, Config: p.Config, Decision: p.Decision})
}

// k3sVersion puts the k3s binary's version into the plan's facts and
// decides again on it (the probe knows RKE2's data directories only).
func k3sVersion(ctx context.Context, o PrepareOptions, dist distro.Distro, p *hostplan.Plan) {
	for _, u := range dist.Units {
		if u.Binary == "" {
			continue
		}
		v, err := K3sVersion(ctx, Options{Root: o.Root}, u.Binary)
		if err != nil {
			o.log("warning: %v: k3s's version is unknown (%s runs it)", err, u.Name)
			return
		}
		kv, _ := rke2.ParseVersion(v)
		p.Facts.RKE2.Version, p.Facts.RKE2.VersionSource, p.Facts.RKE2.Kubernetes = v, u.Binary+" --version", kv
		p.Decision = decide.Decide(p.Facts, p.Config)
		return
	}
}
