package netfilter

import (
	"context"
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// TestNFTablesShallowSkipsChains: verify's read of native nftables
// (Shallow with SkipNFTablesChain and ReadJumps) counts the rules of
// kube-proxy's per-service chains without rendering them but with the
// Jump the full read gives each, renders every other rule as the full read
// does (anonymous sets aside), and keeps no set's elements but, for the
// maps ReadJumps names, the chains they lead to, on kube-proxy 1.34's
// rendered rules of both families (whose per-service chains jump to
// mark-for-masquerade).
func TestNFTablesShallowSkipsChains(t *testing.T) {
	if !nstest.Setup(t, "", "nft") {
		return
	}
	expectedtest.Load(t, expected.Options{Backend: backend.NFTables, Services: 50, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 34, Patch: -1}})
	full, _ := readText(t, backend.NFTables)
	sys := NewSystem(hostfs.New("/"))
	sys.Shallow, sys.SkipNFTablesChain = true, vocab.IsNFTablesPerServiceChain
	sys.ReadJumps = func(name string) bool { return name == "service-ips" }
	got, err := sys.Read(context.Background(), backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tables) != len(full.Tables) || len(full.Tables) == 0 {
		t.Fatalf("shallow read has %d tables, full read %d", len(got.Tables), len(full.Tables))
	}
	skipped, read, jumps, elements := 0, 0, 0, 0
	for i, ft := range full.Tables {
		gt := got.Tables[i]
		if gt.Family != ft.Family || gt.Name != ft.Name || len(gt.Chains) != len(ft.Chains) {
			t.Fatalf("table %d: shallow %s %s with %d chains, full %s %s with %d", i, gt.Family, gt.Name, len(gt.Chains), ft.Family, ft.Name, len(ft.Chains))
		}
		if len(gt.Sets) != len(ft.Sets) {
			t.Fatalf("%s %s: shallow read has %d sets, full read %d", ft.Family, ft.Name, len(gt.Sets), len(ft.Sets))
		}
		for j, fs := range ft.Sets {
			want := fs
			if fs.Name == "service-ips" {
				elements += len(fs.Elements)
				want.Jumps = elementJumps(fs.Elements)
			}
			want.Elements, want.NotRead = nil, true
			if !reflect.DeepEqual(gt.Sets[j], want) {
				t.Errorf("%s %s: shallow read has set %+v, want %+v", ft.Family, ft.Name, gt.Sets[j], want)
			}
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
					want = rules.Rule{NotRead: true, Jump: fr.Jump}
					skipped++
					if fr.Jump != "" {
						jumps++
					}
				} else {
					read++
				}
				if gc.Rules[k] != want {
					t.Errorf("%s %s rule %d: shallow %+v, want %+v", ft.Family, fc.Name, k+1, gc.Rules[k], want)
				}
			}
		}
	}
	if skipped == 0 || read == 0 || jumps == 0 || elements == 0 {
		t.Errorf("%d rules skipped (%d jumping), %d read, %d service-ips elements: the test needs each", skipped, jumps, read, elements)
	}
	t.Logf("%d rules of per-service chains counted (%d jumping), %d read, %d service-ips elements", skipped, jumps, read, elements)
}
