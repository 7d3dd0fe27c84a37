package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// The kubelet-hint finding names the cause that holds on the node: a host
// iptables pointing at the other backend, a kubelet not restarted since it
// moved, or leftovers of the kubelet before a switch (issue 19 item 10:
// every case was told to run update-alternatives and reboot).
func TestHintFindingSaysTheTrueCause(t *testing.T) {
	hints := []string{"ipv4 mangle KUBE-IPTABLES-HINT"}
	both := []BackendState{{Backend: backend.IptablesNFT, Expected: true, KubeletHints: hints}, {Backend: backend.IptablesLegacy, KubeletHints: hints}}
	onlyOld := []BackendState{{Backend: backend.IptablesNFT, Expected: true}, {Backend: backend.IptablesLegacy, KubeletHints: hints}}
	for _, c := range []struct {
		name        string
		states      []BackendState
		host        string
		says, fix   string
		notInTheFix string
	}{
		{"leftovers", both, "nft", "are leftovers: the host's iptables already points at iptables-nft", KubeletHintsCleanup + " (no reboot needed)", "update-alternatives"},
		{"kubelet not restarted", onlyOld, "nft", "kubelet has not started since the alternative moved", "systemctl restart rke2-server", "update-alternatives"},
		{"wrong alternative", both, "legacy", "the host's iptables points at iptables-legacy", "update-alternatives --set iptables /usr/sbin/iptables-nft", ""},
		{"alternative unknown", onlyOld, "", "points at a flavour verify could not tell", "update-alternatives --set iptables /usr/sbin/iptables-nft", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := hintFindings(backend.IptablesNFT, c.states, c.host)
			if len(fs) != 1 || fs[0].Backend != backend.IptablesLegacy {
				t.Fatalf("findings %+v, want one about iptables-legacy", fs)
			}
			f := fs[0]
			if !strings.Contains(f.Message, c.says) || !strings.HasPrefix(f.Fix, c.fix) && !strings.Contains(f.Fix, c.fix) {
				t.Errorf("finding %q fix %q; want %q and a fix with %q", f.Message, f.Fix, c.says, c.fix)
			}
			if c.notInTheFix != "" && strings.Contains(f.Fix, c.notInTheFix) {
				t.Errorf("fix %q tells the operator to %s, which is already done", f.Fix, c.notInTheFix)
			}
		})
	}
}
