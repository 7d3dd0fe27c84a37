package decide

import (
	"slices"
	"strings"
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

// A live switch to nftables is refused on an RKE2 release older than the
// first ones documenting nftables mode, with the version, the releases and
// the fix in the reason; iptables targets and documented releases pass.
func TestSwitchRefusal(t *testing.T) {
	cases := []struct {
		version string
		to      backend.Backend
		want    string // a part of the reason; "" means allowed
	}{
		{"v1.34.4+rke2r1", backend.NFTables, "RKE2 v1.34.4+rke2r1 predates the first releases that document nftables mode (v1.34.10+rke2r1, v1.35.7+rke2r1 and v1.36.3+rke2r1); upgrade RKE2"},
		{"v1.35.6+rke2r1", backend.NFTables, "predates"},
		{"v1.31.7+rke2r1", backend.NFTables, "predates"},
		{"v1.34.10+rke2r1", backend.NFTables, ""},
		{"v1.36.3+rke2r2", backend.NFTables, ""},
		{"v1.37.0+rke2r1", backend.NFTables, ""},
		{"v1.34.4+rke2r1", backend.IptablesNFT, ""},
		{"", backend.NFTables, ""}, // no RKE2 found: apply judges at the restart
	}
	for _, c := range cases {
		f := debian12()
		if c.version != "" {
			f = withRKE2(f, c.version)
		}
		got := SwitchRefusal(f, c.to)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("RKE2 %q, --to %s: refusal %q, want one containing %q", c.version, c.to, got, c.want)
		}
	}
	if got := SwitchRefusal(synology(), backend.NFTables); !strings.HasPrefix(got, "this host cannot run it: ") {
		t.Errorf("synology --to nftables: %q, want the kernel's reason", got)
	}
}
