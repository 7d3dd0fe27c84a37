package verify

import (
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On a legacy node whose kernel has no nf_tables loaded (the fixture
// root's /proc/modules and modules.builtin), verify reads the nf_tables
// backends as empty without asking the kernel (asking would load
// nf_tables) and says so; the namespace's nftables table, which a read
// would have found stranded, is not seen.
func TestVerifyNotLoadedNotOpenedInNetns(t *testing.T) {
	if !nstest.Setup(t, "nft add table ip kube-proxy", "nft") {
		return
	}
	root := testhost.New(t).Kernel("6.1.0-57-cloud-arm64").LoadedModules("ip_tables", "x_tables").BuiltinModules("ext4").Root()
	res := run(t, Options{Expect: backend.IptablesLegacy, Reader: NewReader(root)})
	for _, want := range []string{"no iptables-nft rules (nf_tables not loaded)", "no nftables rules (nf_tables not loaded)"} {
		if !slices.Contains(res.Notes, want) {
			t.Errorf("notes %q lack %q", res.Notes, want)
		}
	}
	for _, f := range res.Findings {
		if f.Backend == backend.NFTables {
			t.Errorf("a finding in nftables, which was not to be asked: %+v", f)
		}
	}
}
