package netfilter

import (
	"context"
	"os"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

func stamp(t *testing.T, sys *System, b backend.Backend) string {
	t.Helper()
	s, err := sys.Stamp(context.Background(), b)
	if err != nil {
		t.Fatalf("stamp %s: %v", b, err)
	}
	return s
}

// A stamp stays put while nothing changes and moves with every change a
// read would see, for each backend; a legacy stamp creates no table.
func TestStampInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	nstest.Tool(t, "iptables-legacy")
	sys := NewSystem(hostfs.New("/"))

	if s := stamp(t, sys, backend.IptablesLegacy); s != "" {
		t.Errorf("legacy stamp with no legacy table = %q, want empty", s)
	}
	nstest.Sh(t, "iptables-legacy -w -t filter -N KUBE-SERVICES")
	before := stamp(t, sys, backend.IptablesLegacy)
	if again := stamp(t, sys, backend.IptablesLegacy); again != before || before == "" {
		t.Errorf("legacy stamp %q then %q with no change", before, again)
	}
	nstest.Sh(t, "iptables-legacy -w -A INPUT -j KUBE-SERVICES")
	if after := stamp(t, sys, backend.IptablesLegacy); after == before {
		t.Errorf("legacy stamp %q did not move after a rule was added", after)
	}
	names, err := os.ReadFile("/proc/net/ip_tables_names")
	if err != nil || string(names) != "filter\n" {
		t.Errorf("legacy tables after stamping = %q (%v), want only filter: a stamp must not create tables", names, err)
	}

	for _, b := range []backend.Backend{backend.NFTables, backend.IptablesNFT} {
		before := stamp(t, sys, b)
		if again := stamp(t, sys, b); again != before {
			t.Errorf("%s stamp %q then %q with no change", b, before, again)
		}
		nstest.Sh(t, "nft add table ip stamp-"+string(b))
		if after := stamp(t, sys, b); after == before {
			t.Errorf("%s stamp %q did not move after a table was added", b, after)
		}
	}
}

// NFTTables lists ip and ip6 tables by name, and only those.
func TestNFTTablesInNetns(t *testing.T) {
	if !nstest.Setup(t, "nft add table ip kube-proxy; nft add table ip6 kube-proxy; nft add table inet other; nft add table ip filter", "nft") {
		return
	}
	tables, err := NFTTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tb := range tables {
		got[string(tb.Family)+" "+tb.Name] = true
	}
	want := map[string]bool{string(rules.IPv4) + " kube-proxy": true, string(rules.IPv6) + " kube-proxy": true, string(rules.IPv4) + " filter": true}
	if len(got) != len(want) || len(tables) != len(want) {
		t.Fatalf("tables %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing %s in %v", k, got)
		}
	}
}
