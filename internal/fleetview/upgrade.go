package fleetview

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// UpgradeRow is a node that would not keep its backend on kube-proxy
// 1.38 (Status "moves"), or of which the view cannot tell ("unknown"):
// 1.38 picks iptables-legacy or iptables-nft by kubelet's hint chains,
// not by IPTABLES_MODE (docs/kubernetes-1.38.md). Nodes that stay, and
// those in nftables mode, are left out.
type UpgradeRow struct {
	Node      string `json:"node"`
	Status    string `json:"status"`
	WouldPick string `json:"would_pick,omitempty"`
	Applied   string `json:"applied,omitempty"`
	// IptablesModeDecides is the node's NodeAnnotationIptablesModeDecides:
	// "no" on a node that moves says its kube-proxy (1.38+) already runs
	// on WouldPick.
	IptablesModeDecides string `json:"iptables_mode_decides,omitempty"`
	// Fix is what to run on the node (moves), or why the view cannot tell.
	Fix string `json:"fix"`
}

// Upgrade138 reads each node's NodeAnnotationK8s138 and
// NodeAnnotationIptablesModeDecides (absent from older writers).
func Upgrade138(nodes []Node) []UpgradeRow {
	var rows []UpgradeRow
	for _, n := range nodes {
		v, ok := n.Annotations[vocab.NodeAnnotationK8s138]
		if !ok {
			rows = append(rows, UpgradeRow{Node: n.Name, Status: "unknown", Fix: "the node publishes no " + vocab.NodeAnnotationK8s138 + " (never verified, or an older rke2-proxy-backend): upgrade it and let verify run"})
			continue
		}
		fields := strings.Split(v, "; ")
		switch last := fields[len(fields)-1]; {
		case fields[0] == "not-affected" || last == "stays" && len(fields) == 3:
			continue
		case last == "moves" && len(fields) == 3 && strings.HasPrefix(fields[0], "would-pick=") && strings.HasPrefix(fields[1], "applied="):
			applied := strings.TrimPrefix(fields[1], "applied=")
			rows = append(rows, UpgradeRow{Node: n.Name, Status: "moves", WouldPick: strings.TrimPrefix(fields[0], "would-pick="), Applied: applied, Fix: vocab.KubeletHintsFix(strings.TrimPrefix(applied, "iptables-"))})
		case fields[0] == "unknown":
			rows = append(rows, UpgradeRow{Node: n.Name, Status: "unknown", Fix: "the node cannot tell: " + strings.Join(fields[1:], "; ")})
		default:
			rows = append(rows, UpgradeRow{Node: n.Name, Status: "unknown", Fix: fmt.Sprintf("%s=%q is not a value this view reads", vocab.NodeAnnotationK8s138, oneLine(v))})
		}
		// Every case but the first appended n's row.
		rows[len(rows)-1].IptablesModeDecides = oneLine(n.Annotations[vocab.NodeAnnotationIptablesModeDecides])
	}
	return rows
}

// UpgradeTable is rows as text, one line each.
func UpgradeTable(rows []UpgradeRow) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tON 1.38\tWOULD PICK\tAPPLIED\tIPTABLES_MODE DECIDES\tFIX")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(r.Node), r.Status, dash(r.WouldPick), dash(r.Applied), dash(r.IptablesModeDecides), r.Fix)
	}
	w.Flush()
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return oneLine(s)
}
