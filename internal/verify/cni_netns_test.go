package verify

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// felixRules is the start of what Felix's iptables dataplane writes on a
// Canal node (iptables-save of a node running calico-node): base-chain
// jumps tagged "cali:<hash>" into cali-* chains, and the chains they chain
// into. Six cali- chains: filter cali-FORWARD, cali-from-hep-forward,
// cali-to-hep-forward; nat cali-PREROUTING, cali-POSTROUTING,
// cali-nat-outgoing.
const felixRules = `*filter
:cali-FORWARD - [0:0]
:cali-from-hep-forward - [0:0]
:cali-to-hep-forward - [0:0]
-A FORWARD -m comment --comment "cali:wUHhoiAYhphO9Mso" -j cali-FORWARD
-A cali-FORWARD -m comment --comment "cali:vjrMJCRpqwy5oRoX" -j MARK --set-xmark 0x0/0xe0000
-A cali-FORWARD -m comment --comment "cali:A_sPAO0mcxbT9mOV" -m mark --mark 0x0/0x10000 -j cali-from-hep-forward
-A cali-FORWARD -m comment --comment "cali:8ZoYfO5HKXWbB3pk" -j cali-to-hep-forward
COMMIT
*nat
:cali-PREROUTING - [0:0]
:cali-POSTROUTING - [0:0]
:cali-nat-outgoing - [0:0]
-A PREROUTING -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
-A POSTROUTING -m comment --comment "cali:O3lYWMrLQYEMJtB5" -j cali-POSTROUTING
-A cali-POSTROUTING -m comment --comment "cali:nYKhEzDlr11Jccal" -j cali-nat-outgoing
COMMIT
`

// nodeLocalDNSRules are node-cache's NOTRACK rules for its link-local
// address (kubernetes/dns cmd/node-cache/app): no chain of its own.
const nodeLocalDNSRules = `*raw
-A PREROUTING -d 169.254.20.10/32 -p udp -m udp --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -s 169.254.20.10/32 -p udp -m udp --sport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
COMMIT
`

func loadIptables(t *testing.T, b backend.Backend, payload string) {
	t.Helper()
	tool := map[backend.Backend]string{backend.IptablesLegacy: "iptables-legacy-restore", backend.IptablesNFT: "iptables-nft-restore"}[b]
	cmd := exec.Command(tool, "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(payload)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}

func TestCNIOtherBackendInNetns(t *testing.T) {
	canal := cni.NewSetup(nil, "", nil)
	calico := cni.NewSetup([]string{"calico"}, "/etc/rancher/rke2/config.yaml", nil)
	cases := []struct {
		name          string
		expect        backend.Backend
		setup         *cni.Setup
		writer        backend.Backend
		payload       string
		want, fix     string
		otherChains   int
		countsBackend backend.Backend
	}{
		{"Felix in legacy, kube-proxy in iptables-nft", backend.IptablesNFT, &canal, backend.IptablesLegacy, felixRules,
			"cni-other-backend@iptables-legacy", "rke2-canal set calico.felixIptablesBackend: nft", 6, backend.IptablesLegacy},
		{"Felix next to kube-proxy in iptables-nft", backend.IptablesNFT, &canal, backend.IptablesNFT, felixRules, "", "", 0, backend.IptablesNFT},
		{"Felix in iptables-nft, kube-proxy in legacy (rke2-calico)", backend.IptablesLegacy, &calico, backend.IptablesNFT, felixRules,
			"cni-other-backend@iptables-nft", `"iptablesBackend":"Legacy"`, 6, backend.IptablesNFT},
		// NodeLocal DNS uses iptables only: next to nftables mode its rules
		// in iptables-nft are where they can be; in legacy they are not.
		{"NodeLocal DNS in iptables-nft, kube-proxy nftables", backend.NFTables, nil, backend.IptablesNFT, nodeLocalDNSRules, "", "", 0, backend.IptablesNFT},
		{"NodeLocal DNS in legacy, kube-proxy nftables", backend.NFTables, nil, backend.IptablesLegacy, nodeLocalDNSRules,
			"cni-other-backend@iptables-legacy", "nodelocal.enabled: false", 2, backend.IptablesLegacy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			loadExpected(t, c.expect, 3, rules.IPv4, rules.IPv6)
			loadIptables(t, c.writer, c.payload)
			r := NewReader(hostfs.New("/"))
			res := run(t, Options{Expect: c.expect, Reader: r, CNI: c.setup})
			var text strings.Builder
			WriteText(&text, res)
			if got := kinds(res); got != c.want {
				t.Fatalf("findings %q, want %q\n%s", got, c.want, text.String())
			}
			if c.want != "" {
				f := res.Findings[0]
				if !strings.Contains(f.Fix, c.fix) || !strings.Contains(f.Message, fmt.Sprintf("%d chain(s)", c.otherChains)) {
					t.Errorf("finding does not name %q and %d chains:\n%s", c.fix, c.otherChains, text.String())
				}
			}
			m := string(Metrics(res, time.Unix(0, 0)))
			if c.want != "" && !strings.Contains(m, fmt.Sprintf(`rke2_proxy_backend_cni_other_backend_chains{backend="%s",cni=`, c.countsBackend)) {
				t.Errorf("metrics lack the other-backend count:\n%s", m)
			}
			if !strings.Contains(m, fmt.Sprintf(`rke2_proxy_backend_cni_rules{backend="%s",cni=`, c.countsBackend)) {
				t.Errorf("metrics lack the CNI chain count in %s:\n%s", c.countsBackend, m)
			}
		})
	}
}
