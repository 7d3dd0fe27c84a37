package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func reasonWith(d Decision, parts ...string) string {
	for _, r := range d.Reasons {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(r, p)
		}
		if all {
			return r
		}
	}
	return ""
}

// A leftover feature-gates=NFTablesProxyMode=true in the operator's own
// RKE2 config is named, with its file, line and what to remove, on the
// Kubernetes version that refuses it, and only there; the file is the
// operator's and keeps its bytes.
func TestLeftoverNFTablesGate(t *testing.T) {
	const gate = "feature-gates=NFTablesProxyMode=true"
	for _, tc := range []struct {
		name    string
		host    func(*testhost.Host)
		refuses bool
		want    []string
	}{
		{"1.38, config.yaml", func(h *testhost.Host) { h.Debian12().RKE2v138().KubeProxyArgs("config.yaml", false, gate) }, true,
			[]string{"Warning: kube-proxy v1.38.0 will not start: /etc/rancher/rke2/config.yaml line 2, kube-proxy-arg \"" + gate + "\"", "Kubernetes 1.38 removed the feature gate NFTablesProxyMode", "remove that item"}},
		{"1.38, config.yaml.d with +", func(h *testhost.Host) {
			h.Debian12().RKE2v138().KubeProxyArgs("config.yaml.d/40-old.yaml", true, "v=2", "feature-gates=NFTablesProxyMode=true,KubeProxyNFTablesLocalhostNodePorts=true")
		}, true, []string{"/etc/rancher/rke2/config.yaml.d/40-old.yaml line 2", `remove "NFTablesProxyMode=true" from that item`}},
		{"1.34 ignores it and is told 1.38 refuses it", func(h *testhost.Host) {
			h.Debian12().RKE2v134().KubeProxyArgs("config.yaml", false, gate)
		}, false, []string{"Note: kube-proxy v1.34.10 ignores a setting", "locked to true since Kubernetes 1.33", "Kubernetes 1.38 removes it"}},
		{"1.37 accepts it and ignores it", func(h *testhost.Host) {
			h.Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.37.2+rke2r1").KubeProxyArgs("config.yaml", false, gate)
		}, false, []string{"Note: ", "ignores a setting"}},
		{"1.37 refuses =false", func(h *testhost.Host) {
			h.Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.37.2+rke2r1").KubeProxyArgs("config.yaml", false, "feature-gates=NFTablesProxyMode=false")
		}, true, []string{"Warning: ", "locked to true since Kubernetes 1.33", "refuses to set it to false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testhost.New(t)
			tc.host(h)
			f, c, d := decideOn(t, h)
			if r := reasonWith(d, tc.want...); r == "" {
				t.Errorf("no reason with %q in:\n%s", tc.want, strings.Join(d.Reasons, "\n"))
			}
			if got := len(KubeProxyRefusals(f, c, d)) > 0; got != tc.refuses {
				t.Errorf("KubeProxyRefusals: %v, want %v", got, tc.refuses)
			}
			if why := SwitchRefusal(f, backend.IptablesNFT); (why != "") != tc.refuses || tc.refuses && !strings.Contains(why, tc.want[len(tc.want)-1]) {
				t.Errorf("SwitchRefusal = %q, want a refusal: %v", why, tc.refuses)
			}
			if slices.ContainsFunc(d.KubeProxyArgs, func(a string) bool { return strings.Contains(a, "NFTablesProxyMode") }) {
				t.Errorf("the drop-in would repeat the gate: %q", d.KubeProxyArgs)
			}
		})
	}
}

// A clean 1.38 node has no finding.
func TestNoFindingWithoutSettings(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v138().PinnedProxyMode("nftables")
	f, c, d := decideOn(t, h)
	if fs := KubeProxyFindings(f, c, d); len(fs) != 0 {
		t.Errorf("findings %+v on a clean 1.38 node", fs)
	}
}

// The tool's own drop-in never carries what kube-proxy refuses or ignores:
// kube_proxy.extra_args loses the pair (or item), and the reason says so.
func TestExtraArgsDropped(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.40.0+rke2r1").
		File(hostfs.ConfigFile, "kube_proxy:\n  extra_args:\n    - feature-gates=MultiCIDRServiceAllocator=true,KubeProxyNFTablesLocalhostNodePorts=true\n    - ipvs-scheduler=lc\n    - iptables-min-sync-period=2s\n")
	_, _, d := decideOn(t, h)
	want := []string{"proxy-mode=iptables", "feature-gates=KubeProxyNFTablesLocalhostNodePorts=true", "iptables-min-sync-period=2s"}
	if !slices.Equal(d.KubeProxyArgs, want) {
		t.Errorf("KubeProxyArgs = %q, want %q", d.KubeProxyArgs, want)
	}
	for _, parts := range [][]string{{"kube_proxy.extra_args in " + hostfs.ConfigFile, "removed the feature gate MultiCIDRServiceAllocator", `leaves "MultiCIDRServiceAllocator=true" out`},
		{"ipvs-scheduler=lc", "applies only to ipvs mode"}} {
		if reasonWith(d, parts...) == "" {
			t.Errorf("no reason with %q in:\n%s", parts, strings.Join(d.Reasons, "\n"))
		}
	}
}

// Before 1.40 kube-proxy still takes ipvs-* flags in every mode, but a
// node out of ipvs keeps none of the tool's: a migrated node's drop-in
// carries nothing that 1.40 ignores and ipvs's removal takes away.
func TestExtraIPVSArgsLeftOutOfIPVS(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.36.3+rke2r1").
		File(hostfs.ConfigFile, "kube_proxy:\n  extra_args:\n    - ipvs-scheduler=sh\n    - ipvs-strict-arp=true\n    - iptables-min-sync-period=2s\n")
	_, _, d := decideOn(t, h)
	if want := []string{"proxy-mode=iptables", "iptables-min-sync-period=2s"}; !slices.Equal(d.KubeProxyArgs, want) {
		t.Errorf("KubeProxyArgs = %q, want %q", d.KubeProxyArgs, want)
	}
	if reasonWith(d, `"ipvs-strict-arp=true", which applies only to ipvs mode, and kube-proxy runs iptables mode, so the drop-in leaves it out`) == "" {
		t.Errorf("no reason for the left-out item in:\n%s", strings.Join(d.Reasons, "\n"))
	}
	_, _, d = decideOn(t, testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.ConfigFile, "kube_proxy:\n  extra_args:\n    - ipvs-strict-arp=true\n"))
	if !slices.Contains(d.KubeProxyArgs, "ipvs-strict-arp=true") {
		t.Errorf("under ipvs the item is dropped: %q", d.KubeProxyArgs)
	}
}

// proxy-mode=ipvs pinned in RKE2's config: the tool keeps the mode and
// decides the backend under it, but from 1.40 kube-proxy refuses the mode,
// and that is said. switch refuses until the operator removes the item
// (it never writes a second proxy mode over the operator's), naming it.
func TestIPVSPinOn140(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.40.0+rke2r1").PinnedProxyMode("ipvs")
	f, c, d := decideOn(t, h)
	if d.Disabled || d.ProxyMode != "ipvs" || reasonWith(d, "Warning: ", "KubeProxyIPVS is off by default", "/etc/rancher/rke2/config.yaml line 2") == "" {
		t.Errorf("decision %+v lacks the ipvs finding", d)
	}
	if fs := KubeProxyRefusals(f, c, d); len(fs) != 1 || fs[0].Severity != kpargs.Refuses {
		t.Errorf("refusals %+v", fs)
	}
	if why := SwitchRefusal(f, backend.NFTables); !strings.Contains(why, "proxy-mode=ipvs (/etc/rancher/rke2/config.yaml line 2") || !strings.Contains(why, "remove that item") {
		t.Errorf("switch to nftables from ipvs: %q", why)
	}
}
