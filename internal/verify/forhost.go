package verify

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
)

// ForHost builds one run's options from the host under h.Root: the
// expected backend and Kubernetes version (the claim, else the plan, see
// Expect), the node's IP families, the host's iptables alternative,
// kube-proxy's /proxyMode endpoint, the distribution (distro.Find, or
// h.Distribution), the CNI RKE2 runs or, on k3s, which of k3s's own
// writers run, how to list the CNIs' own nftables tables, and the reader
// with verify's read bounds. It
// reads the host at every call: the operator may change RKE2's config or
// the CNI between runs, and apply rewrites the plan when RKE2 restarts.
// Wait, Poll and Progress are left to the caller's run. The result and
// error are Expect's: a "cannot tell" result to report instead of
// running, or (nil, nil) with Options.Expect "" when the plan turned the
// tool off.
func ForHost(h Host) (Options, *Result, error) {
	opts := Options{Reader: h.Reader}
	if opts.Reader == nil {
		opts.Reader = NewReader(h.Root)
	}
	d := distro.Find(h.Root, h.Distribution)
	var ep kubeproxy.Endpoint
	if h.ProxyMode != nil {
		ep = *h.ProxyMode
	} else {
		// k3s's kube-proxy is told its metrics address in k3s's config.
		eff, _ := facts.EffectiveConfig(h.Root, d.Kind)
		ep = kubeproxy.ProxyModeEndpoint(eff)
	}
	opts.ProxyModeURL, opts.ProxyModeSource = ep.URL, ep.Source
	opts.Distribution, opts.Units, opts.NFTTables = d.Kind, d.UnitNames(), netfilter.NFTTables
	var unreadable []string
	if len(d.Kind.Profile().Writers) > 0 {
		// k3s has no HelmChartConfigs: its config says which of its own
		// writers run beside kube-proxy.
		var n facts.K3sNetwork
		n, unreadable = facts.ReadK3sNetwork(h.Root, d.Kind)
		opts.K3s = &n
	} else {
		var setup cni.Setup
		setup, unreadable = facts.ReadCNI(h.Root)
		opts.CNI = &setup
	}
	if h.Warn != nil {
		for _, u := range unreadable {
			h.Warn(u)
		}
	}
	if h.Root.IsHost() {
		opts.IPVS = withIPVSKernel(h.Root, ipvs.ReadFootprint)
	}
	unknown, err := Expect(h.Root, h.Claim, &opts)
	return opts, unknown, err
}
