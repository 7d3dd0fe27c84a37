package decide

import (
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// What bench measures: what the kernel can run, whether or not RKE2 (and
// so the Kubernetes version) is known yet.
func TestRunnable(t *testing.T) {
	if got, _ := Runnable(debian12()); !slices.Equal(got, backend.All) {
		t.Errorf("debian 12 before RKE2's first start: %v, want all three", got)
	}
	got, not := Runnable(synology())
	if !slices.Equal(got, []backend.Backend{backend.IptablesLegacy}) || not[backend.NFTables] == "" || not[backend.IptablesNFT] == "" {
		t.Errorf("synology: runnable %v, not %q", got, not)
	}
	if got, _ := Runnable(alpine617()); slices.Contains(got, backend.IptablesLegacy) {
		t.Errorf("alpine 6.17 has no legacy xtables, yet %v", got)
	}
}
