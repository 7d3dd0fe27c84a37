package live

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// kube-proxy's own table (upstream's reference dump, loaded by the host
// nft) and a firewall's table both hold sets with user data; the probe
// names only the firewall's.
func TestForeignUserdataSetsInNetns(t *testing.T) {
	dump := filepath.Join(nstest.RefDir(t), "derived", "nftables-overall-v4.reordered.nft")
	if !nstest.Setup(t, "", "nft") {
		return
	}
	nstest.Sh(t, "nft -f "+dump+` && nft -f - <<'EOF'
table inet fw {
	set allowed { type ipv4_addr; comment "allowed hosts"; }
}
table ip6 kube-proxy-lookalike {
	set s { typeof ip6 saddr; }
}
EOF`)
	conn, err := nl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	all, err := conn.DumpSetUserdata(maxUserdataSets)
	conn.Close()
	if err != nil || !slices.ContainsFunc(all, func(s nl.SetUserdata) bool { return s.Table == "kube-proxy" }) {
		t.Fatalf("kube-proxy's sets carry no user data here (%v), so the test proves nothing: %v", err, all)
	}
	f := facts.Probe(hostfs.New("/"), facts.Options{Live: Read})
	if !f.LiveRules.UserdataSetsRead {
		t.Fatalf("sets not read: %q", f.Problems)
	}
	got := map[string][]string{}
	for _, s := range f.LiveRules.UserdataSets {
		got[s.String()] = s.Kinds
		if s.Table == "kube-proxy" {
			t.Errorf("kube-proxy's own set %s is listed as foreign", s)
		}
	}
	if len(got["inet fw set allowed"]) == 0 || len(got["ip6 kube-proxy-lookalike set s"]) == 0 || len(got) != 2 {
		t.Errorf("foreign sets %v, want inet fw set allowed and ip6 kube-proxy-lookalike set s", got)
	}
}
