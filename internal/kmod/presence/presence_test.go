package presence_test

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod/presence"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// nf_tables is absent only when the files say so for certain: modules
// supported, not loaded, and a modules.builtin that does not list it.
// Every other case may hold it, so a reader asks the kernel as before.
func TestAbsent(t *testing.T) {
	const rel = "6.1.0-57-cloud-arm64"
	for _, c := range []struct {
		name   string
		host   func(h *testhost.Host)
		absent bool
	}{
		{"legacy node", func(h *testhost.Host) {
			h.Kernel(rel).LoadedModules("ip_tables", "x_tables", "iptable_nat").BuiltinModules("ext4")
		}, true},
		{"loaded", func(h *testhost.Host) { h.Kernel(rel).LoadedModules("nf_tables", "ip_tables").BuiltinModules("ext4") }, false},
		{"built in", func(h *testhost.Host) { h.Kernel(rel).LoadedModules("ip_tables").BuiltinModules("nf_tables") }, false},
		{"no module support", func(h *testhost.Host) { h.Kernel(rel) }, false},
		{"no modules.builtin", func(h *testhost.Host) { h.Kernel(rel).LoadedModules("ip_tables") }, false},
		{"no release", func(h *testhost.Host) { h.LoadedModules("ip_tables") }, false},
		{"a longer name loaded", func(h *testhost.Host) {
			h.Kernel(rel).LoadedModules("nf_tables_set", "nf_tables2").BuiltinModules("ext4")
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t)
			c.host(h)
			why := presence.Absent(h.Root(), "nf_tables")
			if got := why != ""; got != c.absent {
				t.Fatalf("absent %t (%q), want %t", got, why, c.absent)
			}
			if c.absent {
				check.Says(t, "why", why, "nf_tables is not loaded (/proc/modules) nor built in (/lib/modules/"+rel+"/modules.builtin)")
			}
		})
	}
}

// Property: Absent says absent only when /proc/modules has no line for
// the module, whatever the files hold.
func FuzzAbsent(f *testing.F) {
	f.Add("nf_tables 16384 0 - Live 0x0\n", "kernel/net/netfilter/nf_tables.ko\n")
	f.Add("ip_tables 1 0 - Live 0x0\n", "kernel/fs/ext4/ext4.ko\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, modules, builtin string) {
		h := testhost.New(t).Kernel("6.1.0-test").File("/proc/modules", modules).File("/lib/modules/6.1.0-test/modules.builtin", builtin)
		why := presence.Absent(h.Root(), "nf_tables")
		for _, line := range strings.Split(modules, "\n") {
			if strings.HasPrefix(line, "nf_tables ") && why != "" {
				t.Fatalf("absent although /proc/modules lists it: %q", why)
			}
		}
	})
}
