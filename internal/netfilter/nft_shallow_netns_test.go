package netfilter

import (
	"context"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// TestNFTablesShallowSkipsChains: verify's read of native nftables
// (Shallow with SkipNFTablesChain) counts the rules of kube-proxy's
// per-service chains without rendering them, and renders every other rule
// as the full read does (anonymous sets aside), on kube-proxy's rendered
// rules of both families.
func TestNFTablesShallowSkipsChains(t *testing.T) {
	if !nstest.Setup(t, "", "nft") {
		return
	}
	expectedtest.Load(t, expected.Options{Backend: backend.NFTables, Services: 50})
	full, _ := readText(t, backend.NFTables)
	sys := NewSystem(hostfs.New("/"))
	sys.Shallow, sys.SkipNFTablesChain = true, vocab.IsNFTablesPerServiceChain
	got, err := sys.Read(context.Background(), backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tables) != len(full.Tables) || len(full.Tables) == 0 {
		t.Fatalf("shallow read has %d tables, full read %d", len(got.Tables), len(full.Tables))
	}
	skipped, read := 0, 0
	for i, ft := range full.Tables {
		gt := got.Tables[i]
		if gt.Family != ft.Family || gt.Name != ft.Name || len(gt.Chains) != len(ft.Chains) {
			t.Fatalf("table %d: shallow %s %s with %d chains, full %s %s with %d", i, gt.Family, gt.Name, len(gt.Chains), ft.Family, ft.Name, len(ft.Chains))
		}
		for j, fc := range ft.Chains {
			gc := gt.Chains[j]
			if gc.Name != fc.Name || len(gc.Rules) != len(fc.Rules) {
				t.Errorf("%s chain %d: shallow %s with %d rules, full %s with %d", ft.Name, j, gc.Name, len(gc.Rules), fc.Name, len(fc.Rules))
				continue
			}
			for k, fr := range fc.Rules {
				want := fr
				want.Text = withoutElements(fr.Text)
				if vocab.IsNFTablesPerServiceChain(fc.Name) {
					want = rules.Rule{NotRead: true}
					skipped++
				} else {
					read++
				}
				if gc.Rules[k] != want {
					t.Errorf("%s %s rule %d: shallow %+v, want %+v", ft.Family, fc.Name, k+1, gc.Rules[k], want)
				}
			}
		}
	}
	if skipped == 0 || read == 0 {
		t.Errorf("%d rules skipped, %d read: the test needs both", skipped, read)
	}
	t.Logf("%d rules of per-service chains counted, %d read", skipped, read)
}
