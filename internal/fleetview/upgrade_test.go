package fleetview

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Only the nodes that move, and those that cannot tell or never said,
// are listed: an absent or unreadable annotation is unknown, not fine.
func TestUpgrade138(t *testing.T) {
	node := func(name, v string) Node {
		n := Node{Name: name, Annotations: map[string]string{}}
		if v != "" {
			n.Annotations[vocab.NodeAnnotationK8s138] = v
		}
		return n
	}
	moved := node("moved-nft", "would-pick=iptables-legacy; applied=iptables-nft; moves")
	moved.Annotations[vocab.NodeAnnotationIptablesModeDecides] = "no"
	rows := Upgrade138([]Node{
		node("moves-legacy", "would-pick=iptables-nft; applied=iptables-legacy; moves"),
		moved,
		node("stays", "would-pick=iptables-nft; applied=iptables-nft; stays"),
		node("nft", "not-affected; applied=nftables"),
		node("cannot", "unknown; iptables-legacy's rules could not be read"),
		node("old", ""),
		node("garbled", "moves"),
	})
	want := []struct{ node, status, decides, fix string }{
		{"moves-legacy", "moves", "", "move the host's iptables alternative to legacy (`update-alternatives --set iptables /usr/sbin/iptables-legacy`, and ip6tables likewise) so kubelet writes its chains there, restart RKE2, then remove the stale ones in iptables-nft with `rke2-proxy-backend cleanup --kubelet-hints`"},
		{"moved-nft", "moves", "no", ""},
		{"cannot", "unknown", "", "the node cannot tell: iptables-legacy's rules could not be read"},
		{"old", "unknown", "", ""},
		{"garbled", "unknown", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want %d", rows, len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Node != w.node || r.Status != w.status || r.IptablesModeDecides != w.decides || w.fix != "" && r.Fix != w.fix {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	if table := UpgradeTable(rows); !strings.Contains(table, "IPTABLES_MODE DECIDES") || !strings.Contains(table, "moved-nft     moves    iptables-legacy  iptables-nft     no  ") {
		t.Errorf("the table lacks the column:\n%s", table)
	}
}
