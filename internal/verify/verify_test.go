package verify

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

func skeleton(t *testing.T, b backend.Backend, kv rke2.KubeVersion, services int) *rules.Ruleset {
	t.Helper()
	rs, err := expected.Render(expected.Options{Backend: b, Kubernetes: kv, Services: services})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// minor is Kubernetes 1.n with its patch unknown, as a version named only
// by its minor reads.
func minor(n int) rke2.KubeVersion { return rke2.KubeVersion{Major: 1, Minor: n, Patch: -1} }

func run(t *testing.T, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func kinds(r *Result) string {
	var k []string
	for _, f := range r.Findings {
		k = append(k, f.Kind+"@"+string(f.Backend))
	}
	return strings.Join(k, ",")
}

func TestVerdicts(t *testing.T) {
	legacy := skeleton(t, backend.IptablesLegacy, rke2.KubeVersion{}, 20)
	nft := skeleton(t, backend.IptablesNFT, rke2.KubeVersion{}, 20)
	native := skeleton(t, backend.NFTables, rke2.KubeVersion{}, 20)
	native133 := skeleton(t, backend.NFTables, rke2.KubeVersion{Major: 1, Minor: 33}, 0)

	noJump := rules.Clone(legacy)
	for ti := range noJump.Tables {
		for ci := range noJump.Tables[ti].Chains {
			c := &noJump.Tables[ti].Chains[ci]
			if noJump.Tables[ti].Name == "nat" && c.Name == "POSTROUTING" {
				c.Rules = nil
			}
		}
	}
	hintOnly := &rules.Ruleset{Backend: backend.IptablesNFT, Tables: []rules.Table{{Family: rules.IPv4, Name: "mangle",
		Chains: []rules.Chain{{Name: "KUBE-IPTABLES-HINT"}}}}}
	kubeletOnly := &rules.Ruleset{Backend: backend.IptablesNFT, Tables: []rules.Table{{Family: rules.IPv4, Name: "filter",
		Chains: []rules.Chain{{Name: "INPUT", Rules: []rules.Rule{{Text: "-j KUBE-FIREWALL", Jump: "KUBE-FIREWALL"}}}, {Name: "KUBE-FIREWALL"}}}}}
	emptyLegacy := &rules.Ruleset{Backend: backend.IptablesLegacy, Tables: []rules.Table{{Family: rules.IPv4, Name: "mangle",
		Chains: []rules.Chain{{Name: "PREROUTING"}, {Name: "OUTPUT"}}}}}

	cases := []struct {
		name   string
		expect backend.Backend
		live   []*rules.Ruleset
		want   string
	}{
		{"clean legacy", backend.IptablesLegacy, []*rules.Ruleset{legacy}, ""},
		{"clean iptables-nft with empty probe table in legacy", backend.IptablesNFT, []*rules.Ruleset{nft, emptyLegacy}, ""},
		{"clean nftables", backend.NFTables, []*rules.Ruleset{native}, ""},
		{"nftables 1.33 layout, version unknown", backend.NFTables, []*rules.Ruleset{native133}, ""},
		{"nothing synced", backend.IptablesNFT, nil, "missing-table@iptables-nft,missing-table@iptables-nft,missing-table@iptables-nft,missing-table@iptables-nft,missing-table@iptables-nft,missing-table@iptables-nft"},
		{"missing nat POSTROUTING jump", backend.IptablesLegacy, []*rules.Ruleset{noJump}, "missing-jump@iptables-legacy,missing-jump@iptables-legacy"},
		{"stranded legacy rules", backend.IptablesNFT, []*rules.Ruleset{nft, legacy}, "stranded-rules@iptables-legacy,kubelet-hint@iptables-legacy"},
		{"nftables next to iptables leftovers", backend.NFTables, []*rules.Ruleset{native, nft}, "stranded-rules@iptables-nft"},
		{"kubelet hint in the other backend", backend.IptablesLegacy, []*rules.Ruleset{legacy, hintOnly}, "kubelet-hint@iptables-nft"},
		{"kubelet's KUBE-FIREWALL alone is not stranded", backend.IptablesLegacy, []*rules.Ruleset{legacy, kubeletOnly}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, Options{Expect: c.expect, Reader: newFake(t, c.live...)})
			if got := kinds(res); got != c.want {
				t.Errorf("findings %q, want %q\n%+v", got, c.want, res.Findings)
			}
			if res.OK != (c.want == "") {
				t.Errorf("OK = %v with findings %q", res.OK, c.want)
			}
			for _, f := range res.Findings {
				if f.Fix == "" || f.Message == "" {
					t.Errorf("finding without message or fix: %+v", f)
				}
				if f.Kind == KindStranded && f.Fix != CleanupCommand(f.Backend) {
					t.Errorf("stranded fix %q, want %q", f.Fix, CleanupCommand(f.Backend))
				}
			}
		})
	}
}

// verify waits for kube-proxy's first sync: rules that appear during the
// wait count.
func TestWaitsForFirstSync(t *testing.T) {
	fake := newFake(t)
	polls := 0
	opts := Options{Expect: backend.IptablesNFT, Reader: fake, Wait: time.Hour, Poll: time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			polls++
			if polls == 3 {
				fake.Set(skeleton(t, backend.IptablesNFT, rke2.KubeVersion{}, 0))
			}
			return nil
		}}
	res := run(t, opts)
	if !res.OK || !res.Synced || polls != 3 {
		t.Errorf("OK=%v synced=%v after %d polls, want ok after 3: %+v", res.OK, res.Synced, polls, res.Findings)
	}
	res = run(t, Options{Expect: backend.NFTables, Reader: fake})
	if res.Synced || res.OK {
		t.Errorf("no wait, nothing in nftables: synced=%v ok=%v", res.Synced, res.OK)
	}
}

// A reader that cannot work (tool missing) ends the wait at once.
func TestNoWaitOnMissingTools(t *testing.T) {
	fake := newFake(t)
	fake.SetError(backend.IptablesLegacy, &netfilter.NotInstalledError{Backend: backend.IptablesLegacy, Binary: "iptables-legacy-save", Err: os.ErrNotExist})
	sleeps := 0
	res := run(t, Options{Expect: backend.IptablesLegacy, Reader: fake, Wait: time.Hour,
		Sleep: func(context.Context, time.Duration) error { sleeps++; return nil }})
	if sleeps != 0 || kinds(res) != "read-error@iptables-legacy" {
		t.Errorf("%d sleeps, findings %q; want no wait and one read-error", sleeps, kinds(res))
	}
}

func TestHintFixNamesRealTools(t *testing.T) {
	f := hintFindings(backend.IptablesNFT, []BackendState{{Backend: backend.IptablesLegacy, KubeletHints: []string{"ipv4 mangle KUBE-IPTABLES-HINT"}}}, "legacy")
	if len(f) != 1 || !strings.Contains(f[0].Fix, "/usr/sbin/iptables-nft;") || !strings.Contains(f[0].Fix, "/usr/sbin/ip6tables-nft)") {
		t.Errorf("fix %+v", f)
	}
}
