package verify_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// TestOracleShallowReadNamesSets: on the newest kube-proxy's own nftables
// rules, verify's read declares every set and map the full read does,
// exactly, but reads none of their elements (its checks know sets by
// name) but where the Service dispatch maps' elements lead, and verify
// still passes them.
func TestOracleShallowReadNamesSets(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	minor := oracle.Minors[len(oracle.Minors)-1]
	tools(t, backend.NFTables)
	oracle.Program(t, minor, backend.NFTables, oracle.Options{Services: 10, IPv6: true})
	ctx := context.Background()
	full, err := netfilter.NewSystem(hostfs.New("/")).Read(ctx, backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := verify.NewReader(hostfs.New("/")).Read(ctx, backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Tables) != 2 || len(lean.Tables) != len(full.Tables) {
		t.Fatalf("full read has %d tables, verify's %d; want ip and ip6 kube-proxy in both", len(full.Tables), len(lean.Tables))
	}
	elements, dispatch := 0, 0
	for i, ft := range full.Tables {
		lt := lean.Tables[i]
		if len(lt.Sets) != len(ft.Sets) {
			t.Errorf("%s %s: verify's read has %d sets, the full read %d", ft.Family, ft.Name, len(lt.Sets), len(ft.Sets))
			continue
		}
		for j, fs := range ft.Sets {
			elements += len(fs.Elements)
			want := fs
			if verify.ReadOptions.ReadJumps(fs.Name) {
				dispatch += len(fs.Elements)
				want.Jumps = elementJumps(fs.Elements)
			}
			want.Elements, want.NotRead = nil, true
			if !reflect.DeepEqual(lt.Sets[j], want) {
				t.Errorf("%s %s: verify's read has set %+v, want %+v", ft.Family, ft.Name, lt.Sets[j], want)
			}
		}
	}
	if elements == dispatch || dispatch == 0 {
		t.Fatalf("the full read has %d set elements, %d of them in dispatch maps: the test needs both kinds", elements, dispatch)
	}
	kv, err := rke2.ParseVersion(minor)
	if err != nil {
		t.Fatal(err)
	}
	if res := runVerify(t, backend.NFTables, kv, bothFamilies); !res.OK {
		t.Errorf("verify on kube-proxy %s's healthy rules:\n%s", minor, report(res))
	}
}

// elementJumps are the chains elements jump or go to, sorted, each once.
func elementJumps(elements []string) []string {
	var out []string
	for _, e := range elements {
		if j := rules.ElementJump(e); j != "" {
			out = append(out, j)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
