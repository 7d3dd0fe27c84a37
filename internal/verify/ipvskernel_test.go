package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// No IPVS family in the running kernel is said as what is true of its
// module tree: on a Debian node ip_vs.ko is installed but not loaded, and
// "IPVS not in this kernel" was wrong there (issue 30 item 8).
func TestIPVSAbsenceSaysWhatIsTrue(t *testing.T) {
	noIPVS := func() ipvs.Footprint { return ipvs.Footprint{Services: ipvs.Services{Absent: ipvs.NotInKernel}} }
	for _, c := range []struct {
		name string
		host func(*testhost.Host)
		want string
	}{
		{"ip_vs.ko installed, not loaded", func(h *testhost.Host) { h.IPVSModuleTree() },
			"ipvs leftovers: ip_vs is not loaded (the module is available): no virtual server can exist"},
		{"a kernel without IPVS", func(h *testhost.Host) { h.IPVSModuleTree("ip_vs") },
			"ipvs leftovers: IPVS is not in this kernel (ip_vs is not loaded, not built in, and not in /lib/modules/6.1.0-18-amd64/modules.dep): no virtual server can exist"},
		{"no module tree", func(h *testhost.Host) { h.Remove("/lib/modules") },
			"ipvs leftovers: ip_vs is not loaded (whether its module is installed is unknown): no virtual server can exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12()
			c.host(h)
			_, notes := IPVSLeftoverFindings(withIPVSKernel(h.Root(), noIPVS)())
			if got := strings.Join(notes, "\n"); got != c.want {
				t.Errorf("notes %q, want %q", got, c.want)
			}
		})
	}
	// A footprint with IPVS, or read errors, is left as read.
	present := func() ipvs.Footprint { return ipvs.Footprint{Services: ipvs.Services{Present: true}} }
	if f := withIPVSKernel(testhost.New(t).Debian12().Root(), present)(); f.Services.Absent != "" {
		t.Errorf("IPVS present, yet %q", f.Services.Absent)
	}
}
