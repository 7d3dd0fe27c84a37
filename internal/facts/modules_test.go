package facts

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestModuleParsers(t *testing.T) {
	loaded, err := ParseProcModules(strings.NewReader("nf_tables 286720 0 - Live 0x0000000000000000\nxt_conntrack 12288 3 - Live 0x0\n\nnf_tables 1 0 - Live 0x0\n"))
	if err != nil || !reflect.DeepEqual(loaded, []string{"nf_tables", "xt_conntrack"}) {
		t.Errorf("loaded = %q, %v", loaded, err)
	}
	builtin, err := ParseModulesBuiltin(strings.NewReader("kernel/net/unix/unix.ko\nkernel/drivers/hid/hid-generic.ko\n"))
	if err != nil || !reflect.DeepEqual(builtin, []string{"hid_generic", "unix"}) {
		t.Errorf("builtin = %q, %v", builtin, err)
	}
	dep, err := ParseModulesDep(strings.NewReader(
		"kernel/net/netfilter/nft_compat.ko.xz: kernel/net/netfilter/nf_tables.ko.xz kernel/net/netfilter/x_tables.ko.xz\n" +
			"kernel/net/netfilter/nf_tables.ko.zst: kernel/lib/libcrc32c.ko\n" +
			"kernel/net/ipv4/netfilter/ip_tables.ko.gz:\n" +
			"updates/dkms/zfs.ko:\n"))
	if err != nil || !reflect.DeepEqual(dep, []string{"ip_tables", "nf_tables", "nft_compat", "zfs"}) {
		t.Errorf("available = %q, %v", dep, err)
	}
}

func TestModuleParsersRejectGarbage(t *testing.T) {
	if _, err := ParseModulesDep(strings.NewReader("this is not modules.dep\n")); err == nil {
		t.Error("modules.dep without ':' accepted")
	}
	if _, err := ParseModulesBuiltin(strings.NewReader("kernel/net/unix/unix.o\n")); err == nil {
		t.Error("modules.builtin entry without .ko accepted")
	}
	if _, err := ParseProcModules(strings.NewReader("\x00\x01 bin\n")); err == nil {
		t.Error("binary /proc/modules accepted")
	}
}

func FuzzParseModules(f *testing.F) {
	f.Add("nf_tables 286720 0 - Live 0x0\n")
	f.Add("kernel/net/netfilter/nft_ct.ko.xz: kernel/net/netfilter/nf_tables.ko.xz\n")
	f.Add("kernel/net/unix/unix.ko\n")
	f.Add("a-b:c\n\n :\n")
	parsers := map[string]func(io.Reader) ([]string, error){
		"proc": ParseProcModules, "builtin": ParseModulesBuiltin, "dep": ParseModulesDep,
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, parse := range parsers {
			mods, err := parse(strings.NewReader(text))
			if err != nil {
				continue
			}
			for i, m := range mods {
				if !validModule(m) || strings.Contains(m, "-") {
					t.Fatalf("%s: bad module name %q", name, m)
				}
				if i > 0 && mods[i-1] >= m {
					t.Fatalf("%s: not sorted and unique: %q", name, mods)
				}
			}
		}
	})
}

func TestHasModule(t *testing.T) {
	list := []string{"nf_tables", "ip-tables"}
	for name, want := range map[string]bool{"nf_tables": true, "nf-tables": true, "ip_tables": true, "ip_table": false, "": false} {
		if got := HasModule(list, name); got != want {
			t.Errorf("HasModule(%q, %q) = %v, want %v", list, name, got, want)
		}
	}
}
