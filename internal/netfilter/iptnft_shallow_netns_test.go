package netfilter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/loadcmd"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// TestIptablesNFTShallowSkipsChains: verify's read of iptables-nft (Shallow
// with SkipChain) counts the rules of kube-proxy's per-service chains
// without decoding them and gives every other rule the Jump and Comment
// the full read gives it (which assertSameAsSave holds to
// iptables-nft-save), on rendered kube-proxy rules of both families and
// on a fixture with quotes and backslashes in its comments.
func TestIptablesNFTShallowSkipsChains(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.InNetns(t) {
		return
	}
	rs, err := expected.Render(expected.Options{Backend: backend.IptablesNFT, Services: 100, Families: []rules.Family{rules.IPv4, rules.IPv6}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		nstest.Tool(t, loadcmd.Argv(backend.IptablesNFT, fam)[0])
		if err := loadcmd.Load(backend.IptablesNFT, rs, fam); err != nil {
			t.Fatal(err)
		}
	}
	compareShallowNFT(t)
	nstest.Sh(t, "nft flush ruleset")
	nstest.Sh(t, "iptables-nft-restore < "+filepath.Join(ref, "derived/iptables-tracepacket-fixture-v4.quoted.save"))
	compareShallowNFT(t)
}

func compareShallowNFT(t *testing.T) {
	t.Helper()
	full, _ := readText(t, backend.IptablesNFT)
	assertSameAsSave(t, backend.IptablesNFT, full)
	sys := NewSystem(hostfs.New("/"))
	sys.Shallow, sys.SkipChain = true, ownership.IsPerServiceChain
	got, err := sys.Read(context.Background(), backend.IptablesNFT)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tables) != len(full.Tables) {
		t.Fatalf("shallow read has %d tables, full read %d", len(got.Tables), len(full.Tables))
	}
	skippedRules, readRules, comments := 0, 0, 0
	for i, ft := range full.Tables {
		gt := got.Tables[i]
		where := string(ft.Family) + " " + ft.Name
		if gt.Family != ft.Family || gt.Name != ft.Name || len(gt.Chains) != len(ft.Chains) {
			t.Errorf("table %d: shallow %s %s with %d chains, full %s with %d", i, gt.Family, gt.Name, len(gt.Chains), where, len(ft.Chains))
			continue
		}
		for j, fc := range ft.Chains {
			gc := gt.Chains[j]
			if gc.Name != fc.Name || gc.Hook != fc.Hook || gc.Policy != fc.Policy || len(gc.Rules) != len(fc.Rules) {
				t.Errorf("%s chain %d: shallow %s hook %q policy %q with %d rules, full %s hook %q policy %q with %d",
					where, j, gc.Name, gc.Hook, gc.Policy, len(gc.Rules), fc.Name, fc.Hook, fc.Policy, len(fc.Rules))
				continue
			}
			skipped := ownership.IsPerServiceChain(fc.Name)
			for k, fr := range fc.Rules {
				gr := gc.Rules[k]
				want := rules.Rule{NotRead: true, Jump: fr.Jump, Comment: fr.Comment}
				if skipped {
					want = rules.Rule{NotRead: true}
					skippedRules++
				} else {
					readRules++
					if fr.Comment != "" {
						comments++
					}
				}
				if gr != want {
					t.Errorf("%s %s rule %d: shallow %+v, want %+v", where, fc.Name, k+1, gr, want)
				}
			}
		}
	}
	if readRules == 0 || comments == 0 {
		t.Errorf("%d rules read, %d with a comment: the test needs both", readRules, comments)
	}
	t.Logf("%d rules only counted, %d read shallow (%d with a comment)", skippedRules, readRules, comments)
}
