package switchover

import (
	"encoding/json"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func TestHintReport(t *testing.T) {
	tidy := &HintTidy{
		Want:    backend.IptablesNFT,
		Written: []rules.Family{rules.IPv4, rules.IPv6},
		Removed: []string{"iptables-legacy ipv4 mangle chain KUBE-IPTABLES-HINT"},
		Left:    []string{"iptables-legacy ipv4 filter chain KUBE-KUBELET-CANARY (not kubelet's shape: it holds rules or is jumped to)"},
	}
	dry := HintReport{HintTidy: tidy, KubeProxy: backend.IptablesNFT, DryRun: true}
	want := `cleanup: kubelet's hints belong in iptables-nft for kube-proxy's iptables-nft; kubelet wrote its own there for: ipv4, ipv6
cleanup: would remove 1 leftover kubelet chain(s):
  iptables-legacy ipv4 mangle chain KUBE-IPTABLES-HINT
kept: iptables-legacy ipv4 filter chain KUBE-KUBELET-CANARY (not kubelet's shape: it holds rules or is jumped to)
`
	if got := dry.Text(); got != want {
		t.Errorf("dry run:\n%s\nwant\n%s", got, want)
	}
	none := HintReport{HintTidy: &HintTidy{Want: backend.IptablesLegacy}, KubeProxy: backend.NFTables}
	want = `cleanup: kubelet's hints belong in iptables-legacy for kube-proxy's nftables; kubelet wrote its own there for: no family yet
cleanup: no leftover kubelet chain to remove
`
	if got := none.Text(); got != want {
		t.Errorf("nothing to do:\n%s\nwant\n%s", got, want)
	}
	// The JSON document scripts read: the tidy's fields, then kube-proxy's
	// backend and the dry-run flag.
	b, err := json.Marshal(dry)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"Want":"iptables-nft","Written":["ipv4","ipv6"],"Removed":["iptables-legacy ipv4 mangle chain KUBE-IPTABLES-HINT"],"Left":["iptables-legacy ipv4 filter chain KUBE-KUBELET-CANARY (not kubelet's shape: it holds rules or is jumped to)"],"kube_proxy":"iptables-nft","dry_run":true}`
	if string(b) != wantJSON {
		t.Errorf("JSON:\n%s\nwant\n%s", b, wantJSON)
	}
}
