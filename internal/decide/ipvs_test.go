package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// ipvsKept checks what every ipvs node's decision holds: the mode kept
// (respected, never written), an iptables backend under it with its
// IPTABLES_MODE, and ipvs's preload with the scheduler's module.
func ipvsKept(t *testing.T, d Decision, b backend.Backend, sched string) {
	t.Helper()
	if d.Disabled || d.Backend != b || d.ProxyMode != "ipvs" || d.IPVSScheduler != sched {
		t.Errorf("decision %s / %q / scheduler %q (disabled %v), want %s under ipvs with %s\nreasons:\n%s", d.Backend, d.ProxyMode, d.IPVSScheduler, d.Disabled, b, sched, strings.Join(d.Reasons, "\n"))
	}
	for _, a := range d.KubeProxyArgs {
		if strings.HasPrefix(a, "proxy-mode=") {
			t.Errorf("the drop-in writes %q over the operator's proxy-mode=ipvs", a)
		}
	}
	if !slices.Contains(d.Respected, "proxy-mode=ipvs in "+hostfs.RKE2ConfigFile) {
		t.Errorf("respected %q lacks proxy-mode=ipvs", d.Respected)
	}
	for _, m := range append(modernPreloads(b), "ip_vs", "ip_vs_"+sched, "ip_set", "ip_set_hash_ipport", "ip_set_bitmap_port", "xt_set", "nf_conntrack", "dummy") {
		if !slices.Contains(d.Modules, m) {
			t.Errorf("modules %v lack %s", d.Modules, m)
		}
	}
	for i, m := range d.Modules {
		if slices.Index(d.Modules, m) != i {
			t.Errorf("module %s listed twice: %v", m, d.Modules)
		}
	}
}

func wantReason(t *testing.T, d Decision, parts ...string) {
	t.Helper()
	if reasonWith(d, parts...) == "" {
		t.Errorf("no reason with %q in:\n%s", parts, strings.Join(d.Reasons, "\n"))
	}
}

// Per Kubernetes version RKE2 runs: a Note before kube-proxy warns, a
// Warning from 1.35 on, kube-proxy's own refusal from 1.40; each names
// what to migrate to and the manual step (switch cannot do it yet).
func TestIPVSByVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		parts   []string
	}{
		{"v1.34.10+rke2r1", []string{"Note: kube-proxy deprecates ipvs mode (KEP-5495): it warns from Kubernetes 1.35", "1.40 unless feature-gates=KubeProxyIPVS=true", "no ipvs mode from 1.43", "RKE2 runs Kubernetes v1.34.10, which still runs ipvs without a warning"}},
		{"v1.38.0+rke2r1", []string{"Warning: kube-proxy deprecates ipvs mode", "RKE2 runs Kubernetes v1.38.0, whose kube-proxy still runs ipvs but warns"}},
		{"v1.40.0+rke2r1", []string{"Warning: kube-proxy deprecates ipvs mode", "whose kube-proxy runs ipvs only with feature-gates=KubeProxyIPVS=true"}},
		{"v1.43.0+rke2r1", []string{"Warning: kube-proxy deprecates ipvs mode", "RKE2 runs Kubernetes v1.43.0."}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			_, _, d := decideOn(t, testhost.New(t).IPVSNodeOn(tc.version))
			ipvsKept(t, d, backend.IptablesNFT, "sh")
			wantReason(t, d, tc.parts...)
			wantReason(t, d, "Migrate to ", "remove proxy-mode=ipvs and the ipvs-* kube-proxy-arg items from /etc/rancher/rke2/config.yaml", "kube-ipvs0", "keepalived")
			wantReason(t, d, "ipvs-scheduler=sh in /etc/rancher/rke2/config.yaml: ip_vs_sh")
		})
	}
	_, _, d := decideOn(t, testhost.New(t).IPVSNodeOn("v1.40.0+rke2r1"))
	wantReason(t, d, "Warning: kube-proxy v1.40.0 will not start", `"proxy-mode=ipvs"`)
}

// The kernel, hardware and version reasoning of iptables mode decides the
// backend under ipvs: no nf_tables on the NAS means legacy.
func TestIPVSBackendFollowsTheKernel(t *testing.T) {
	h := testhost.New(t).Synology44().RKE2Unit("tarball", "server").RKE2Version("v1.34.10+rke2r1").IPVSNode("")
	_, _, d := decideOn(t, h)
	ipvsKept(t, d, backend.IptablesLegacy, "rr")
	if !slices.Equal(d.KubeProxyEnv, []string{"IPTABLES_MODE=legacy"}) {
		t.Errorf("env %q", d.KubeProxyEnv)
	}
	wantReason(t, d, "only iptables-legacy can work")
	wantReason(t, d, "no ipvs-scheduler is set, so kube-proxy's default rr: ip_vs_rr")
	wantReason(t, d, "Migrate to iptables-legacy, the backend it runs under ipvs now (not nftables: ")
}

// nftables asked for on an ipvs node is refused with the reason and the
// fix; an iptables backend asked for is the one under ipvs.
func TestIPVSOverrides(t *testing.T) {
	h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.ConfigFile, "backend: nftables\n")
	_, _, d := decideOn(t, h)
	ipvsKept(t, d, backend.IptablesNFT, "sh")
	if len(d.Refused) != 1 || !strings.Contains(d.Refused[0], "backend: nftables in /etc/rke2-proxy-backend/config.yaml asks for nftables, but RKE2's config sets proxy-mode=ipvs") || !strings.Contains(d.Refused[0], "migrate off ipvs first") {
		t.Errorf("refused %q", d.Refused)
	}

	h = testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.ConfigFile, "backend: iptables-legacy\n")
	_, _, d = decideOn(t, h)
	ipvsKept(t, d, backend.IptablesLegacy, "sh")
	if d.Source != "config" || !slices.Equal(d.KubeProxyEnv, []string{"IPTABLES_MODE=legacy"}) || len(d.Refused) != 0 {
		t.Errorf("source %q env %q refused %q", d.Source, d.KubeProxyEnv, d.Refused)
	}
	wantReason(t, d, "sets the iptables backend under ipvs mode", "to iptables-legacy")

	h = testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.ConfigFile, "prefer: [nftables, iptables-nft]\n")
	_, _, d = decideOn(t, h)
	ipvsKept(t, d, backend.IptablesNFT, "sh")
	wantReason(t, d, "The prefer list puts nftables first, but RKE2's config sets proxy-mode=ipvs", "so an iptables backend is used")
}

// respect_rke2_config decides whether an operator's IPTABLES_MODE is kept;
// ipvs itself is kept either way (a move off it strands its state).
func TestIPVSRespectRKE2Config(t *testing.T) {
	h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").RKE2Config("config.yaml.d/20-mode.yaml", "kube-proxy-extra-env: [IPTABLES_MODE=legacy]\n")
	_, _, d := decideOn(t, h)
	ipvsKept(t, d, backend.IptablesLegacy, "sh")
	if d.Source != SourceRKE2Config || len(d.KubeProxyEnv) != 0 {
		t.Errorf("source %q env %q: the pinned IPTABLES_MODE should be kept, not written", d.Source, d.KubeProxyEnv)
	}
	wantReason(t, d, "kube-proxy keeps ipvs mode with iptables-legacy under it")

	h.File(hostfs.ConfigFile, "respect_rke2_config: false\n")
	_, _, d = decideOn(t, h)
	ipvsKept(t, d, backend.IptablesNFT, "sh")
	if !slices.Equal(d.KubeProxyEnv, []string{"IPTABLES_MODE=nft"}) {
		t.Errorf("env %q", d.KubeProxyEnv)
	}
	wantReason(t, d, "respect_rke2_config is false, but the drop-in never moves a node off ipvs")
}

// The scheduler comes from RKE2's config or kube_proxy.extra_args (which
// the drop-in carries, and which ipvs mode does not drop); one the kernel
// lacks is a Warning and becomes no module.
func TestIPVSScheduler(t *testing.T) {
	h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.ConfigFile, "kube_proxy:\n  extra_args: [ipvs-scheduler=wlc]\n")
	_, _, d := decideOn(t, h)
	ipvsKept(t, d, backend.IptablesNFT, "wlc")
	if !slices.Contains(d.KubeProxyArgs, "ipvs-scheduler=wlc") {
		t.Errorf("args %q lack the extra arg", d.KubeProxyArgs)
	}
	wantReason(t, d, "ipvs-scheduler=wlc in /etc/rke2-proxy-backend/config.yaml: ip_vs_wlc")

	h = testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.36.3+rke2r1").IPVSNode("fastest")
	_, _, d = decideOn(t, h)
	wantReason(t, d, `Warning: ipvs-scheduler "fastest" is not one of the kernel's IPVS schedulers`, "(ipvs-scheduler in /etc/rancher/rke2/config.yaml)")
	for _, m := range d.Modules {
		if strings.Contains(m, "fastest") {
			t.Errorf("module %q", m)
		}
	}
}

// switch does not move a node whose RKE2 config still pins ipvs (the
// restart would bring ipvs back): it names the file, the line and the
// item to remove. Once the item is gone the node can be migrated.
func TestIPVSSwitchRefused(t *testing.T) {
	f, _, _ := decideOn(t, testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1"))
	if why := SwitchRefusal(f, backend.IptablesLegacy); !strings.Contains(why, `proxy-mode=ipvs (/etc/rancher/rke2/config.yaml line 2, kube-proxy-arg item "proxy-mode=ipvs")`) || !strings.Contains(why, "remove that item, without restarting RKE2, then run `rke2-proxy-backend switch --to iptables-legacy` again") {
		t.Errorf("switch to iptables-legacy: %q", why)
	}
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.36.3+rke2r1").
		RKE2Config("config.yaml", "kube-proxy-arg:\n  - ipvs-scheduler=sh\n")
	f, _, _ = decideOn(t, h)
	if why := SwitchRefusal(f, backend.IptablesLegacy); why != "" {
		t.Errorf("with proxy-mode=ipvs removed, switch is refused: %q", why)
	}
}

// On k3s both the migration's how-to and switch's refusal say the switch
// restarts k3s, not RKE2.
func TestIPVSK3sWords(t *testing.T) {
	h := testhost.New(t).Debian12().IPVSModuleTree().K3sUnit("k3s", "server").K3sBinary("/usr/local/bin/k3s", "v1.36.3+k3s1").
		K3sConfig("config.yaml", "kube-proxy-arg:\n  - proxy-mode=ipvs\n  - ipvs-scheduler=sh\n")
	f, c := probed(t, h, facts.Options{Distribution: distro.Kind("k3s"), RKE2Binary: true}, nil)
	d := Decide(f, c)
	wantReason(t, d, "without restarting k3s", "then run `rke2-proxy-backend switch --to BACKEND`: it restarts k3s and removes")
	if why := SwitchRefusal(f, backend.IptablesLegacy); !strings.Contains(why, "switch --to iptables-legacy` again; it restarts k3s and removes") {
		t.Errorf("switch to iptables-legacy: %q", why)
	}
}

// A kernel built without IPVS cannot run ipvs mode at all, and that is a
// Warning naming the config; one that has it says nothing of the kind.
func TestIPVSKernelWithoutIPVS(t *testing.T) {
	h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1")
	_, _, d := decideOn(t, h)
	if r := reasonWith(d, "which kube-proxy's ipvs mode needs"); r != "" {
		t.Errorf("a kernel with IPVS modules gets %q", r)
	}
	h.KernelConfig(map[string]string{"NF_TABLES": "m", "NFT_COMPAT": "m", "IP_NF_IPTABLES": "m", "NETFILTER_XTABLES": "m", "IP_VS": "n", "IP_SET": "m"}).
		IPVSModuleTree("ip_vs", "ip_vs_sh", "ip_vs_rr", "xt_ipvs")
	_, _, d = decideOn(t, h)
	wantReason(t, d, "Warning: the kernel has no IPVS (CONFIG_IP_VS is not set in ", "which kube-proxy's ipvs mode needs, so its startup check fails")
	if r := reasonWith(d, "the kernel has no ipset"); r != "" {
		t.Errorf("ipset is there, yet %q", r)
	}
}
