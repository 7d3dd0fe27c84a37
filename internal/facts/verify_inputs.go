package facts

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// EffectiveConfig is the merged config of kind (RKE2's, or k3s's on k3s)
// as the probe reads it (the config and its drop-ins), for what kube-proxy
// is told there (its metrics address).
func EffectiveConfig(root hostfs.Root, kind distro.Kind) (rke2.Effective, []string) {
	r, unreadable := RKE2Layout(root, kind)
	return r.Config, unreadable
}

// RKE2Layout is the units, config and data-dir of kind (RKE2 or k3s) as
// the probe reads them, for the Node condition's publisher, which finds the kubelet's
// credentials under the data-dir and the node's name in the config.
func RKE2Layout(root hostfs.Root, kind distro.Kind) (RKE2, []string) {
	p := &probe{root: root, opts: Options{Distribution: kind}}
	return p.rke2Config(), p.f.Unreadable
}

// IptablesAlternative is where the host's iptables command points:
// "legacy", "nft" or "unknown". kubelet writes its hint chains with it.
func IptablesAlternative(root hostfs.Root) string {
	p := &probe{root: root}
	return p.userspace().IptablesAlternative
}

// VerifyAddOnFacts is what verify's add-ons judge after a run (the nft
// version skew, the kube-proxy args RKE2's release refuses): RKE2's part
// (units, config, CNI, version), the kernel command line and, as opts ask,
// the nft version; nothing else is read. watch runs them after every
// verify run, so a full Probe (kernel config, modules, hardware, live
// rules' tool checks) each time was work thrown away.
func VerifyAddOnFacts(root hostfs.Root, opts Options) Facts {
	p := &probe{root: root, opts: opts}
	p.f.RKE2 = p.rke2()
	p.f.Cmdline = p.cmdline()
	p.toolVersions(&p.f.Userspace)
	return p.f
}
