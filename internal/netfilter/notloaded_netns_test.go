package netfilter

import (
	"context"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Not loaded, not opened: on a root whose /proc/modules and
// modules.builtin show no nf_tables (a legacy node), the reader answers
// "no rules" for both nf_tables backends and stamps them "nf_tables not
// loaded" without asking the kernel, which would load nf_tables. The
// namespace holds a native table and an iptables-nft chain: had the
// reader asked, it would have seen them (as it does once the root shows
// nf_tables loaded). Before, verify and watch asked on every legacy node
// and nf_tables was loaded after RKE2's start (issue 30, arm64 VM).
func TestNotLoadedNotOpenedInNetns(t *testing.T) {
	if !nstest.Setup(t, "nft add table ip kube-proxy; iptables-nft -w -t nat -N KUBE-SERVICES", "nft", "iptables-nft") {
		return
	}
	const rel = "6.1.0-57-cloud-arm64"
	legacyNode := testhost.New(t).Kernel(rel).LoadedModules("ip_tables", "x_tables", "iptable_nat").BuiltinModules("ext4")
	sys := NewSystem(legacyNode.Root())
	ctx := context.Background()
	for _, b := range []backend.Backend{backend.NFTables, backend.IptablesNFT} {
		rs, err := sys.Read(ctx, b)
		if err != nil || len(rs.Tables) != 0 {
			t.Errorf("%s on a legacy node: %d tables (%v), want none without asking", b, len(rs.Tables), err)
		}
		if st, err := sys.Stamp(ctx, b); st != NotLoadedNote || err != nil {
			t.Errorf("%s stamp on a legacy node %q (%v), want %q", b, st, err, NotLoadedNote)
		}
		if n := sys.NotLoaded(b); n != NotLoadedNote {
			t.Errorf("%s: NotLoaded %q", b, n)
		}
	}
	if n := sys.NotLoaded(backend.IptablesLegacy); n != "" {
		t.Errorf("legacy: NotLoaded %q, want \"\" (legacy asks only about listed tables)", n)
	}

	loaded := testhost.New(t).Kernel(rel).LoadedModules("nf_tables", "ip_tables").BuiltinModules("ext4")
	sys = NewSystem(loaded.Root())
	for _, b := range []backend.Backend{backend.NFTables, backend.IptablesNFT} {
		rs, err := sys.Read(ctx, b)
		if err != nil || len(rs.Tables) == 0 {
			t.Errorf("%s with nf_tables loaded: %d tables (%v), want the namespace's", b, len(rs.Tables), err)
		}
		if st, _ := sys.Stamp(ctx, b); st == NotLoadedNote {
			t.Errorf("%s with nf_tables loaded: stamp %q", b, st)
		}
	}
}
