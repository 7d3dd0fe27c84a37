package nl_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// The host's own nft writes the sets (whatever version is installed: the
// test logs it); the netlink reader must see each set's user data records.
func TestDumpSetUserdataNetns(t *testing.T) {
	if !nstest.Setup(t, "", "nft") {
		return
	}
	t.Logf("writer: %s", strings.TrimSpace(nstest.Sh(t, "nft --version")))
	nstest.Sh(t, `nft -f - <<'EOF'
table inet fw {
	set plain { type ipv4_addr; }
	set commented { type ipv4_addr; comment "allowed hosts"; }
	set typed { typeof meta iifname; elements = { "eth0" }; }
	map ports { type inet_service : verdict; }
}
EOF`)
	conn, err := nl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sets, err := conn.DumpSetUserdata(100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range sets {
		got[nl.FamilyName(s.Family)+" "+s.Table+" "+s.Name] = s.Kinds
	}
	t.Logf("read: %v", got)
	for name, want := range map[string][]string{
		"inet fw plain":     {"key-byteorder"},
		"inet fw commented": {"key-byteorder", "comment"},
		"inet fw typed":     {"key-byteorder", "key-typeof"},
		"inet fw ports":     {"key-byteorder", "data-byteorder"},
	} {
		kinds, ok := got[name]
		if !ok {
			t.Errorf("%s: not read (read %v)", name, got)
			continue
		}
		for _, k := range want {
			if !slices.Contains(kinds, k) {
				t.Errorf("%s: user data kinds %v lack %s", name, kinds, k)
			}
		}
	}
	if _, err := conn.DumpSetUserdata(2); err == nil || !strings.Contains(err.Error(), "more than 2 sets carry user data") {
		t.Errorf("a dump past its bound: %v", err)
	}
}
