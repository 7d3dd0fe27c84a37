package verify_test

// k3s's owner group on real rules: kube-proxy's real proxier (the oracle,
// one minor) programs its backend in a throwaway namespace, and rules
// shaped as k3s's flannel and kube-router's network policy controller
// write them are loaded beside it with the real iptables-restore of a
// backend. verify judges them as k3s does them, and nftables mode's also
// as RKE2 with Canal, whose flannel belongs in native nftables there.

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// flannelIptables is what flanneld's iptables traffic manager writes
// (flannel-io/flannel pkg/trafficmngr/iptables: masqRules and forwardRules,
// each rule commented "flanneld masq" or "flanneld forward", the jumps from
// POSTROUTING and FORWARD first), for k3s's default cluster CIDR
// 10.42.0.0/16 and the node's pod CIDR 10.42.1.0/24; 0x4000 is
// kube-proxy's masquerade mark, which flannel leaves to kube-proxy.
const flannelIptables = `*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.42.1.0/24 -d 10.42.0.0/16 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.42.0.0/16 -d 10.42.1.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG ! -s 10.42.0.0/16 -d 10.42.1.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.42.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s 10.42.0.0/16 -d 10.42.0.0/16 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A FLANNEL-FWD -s 10.42.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d 10.42.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
COMMIT
`

// kubeRouterIptables is the start of what kube-router's network policy
// controller (which k3s embeds) writes, as a k3s node's iptables-save
// shows it: KUBE-ROUTER-INPUT/-FORWARD/-OUTPUT hooked first into the
// built-ins with "kube-router netpol - <hash>" comments, the accept of
// traffic its policies marked 0x20000, KUBE-NWPLCY-DEFAULT (icmp allowed,
// then the policy mark) and one pod's KUBE-POD-FW-<hash> chain.
const kubeRouterIptables = `*filter
:KUBE-ROUTER-INPUT - [0:0]
:KUBE-ROUTER-FORWARD - [0:0]
:KUBE-ROUTER-OUTPUT - [0:0]
:KUBE-NWPLCY-DEFAULT - [0:0]
:KUBE-POD-FW-4BDGZEWEU32YM75H - [0:0]
-I INPUT 1 -m comment --comment "kube-router netpol - 4IA2OSFRMVNDXBVV" -j KUBE-ROUTER-INPUT
-I FORWARD 1 -m comment --comment "kube-router netpol - TEMCG2JMHZYE7H7T" -j KUBE-ROUTER-FORWARD
-I OUTPUT 1 -m comment --comment "kube-router netpol - VEAAIY32XVBHCSCY" -j KUBE-ROUTER-OUTPUT
-A FORWARD -m comment --comment "KUBE-ROUTER rule to explicitly ACCEPT traffic that comply to network policies" -m mark --mark 0x20000/0x20000 -j ACCEPT
-A KUBE-ROUTER-FORWARD -d 10.42.1.11/32 -m comment --comment "rule to jump traffic destined to POD name:redis namespace: default to chain KUBE-POD-FW-4BDGZEWEU32YM75H" -j KUBE-POD-FW-4BDGZEWEU32YM75H
-A KUBE-NWPLCY-DEFAULT -p icmp -m comment --comment "allow icmp echo requests" -m icmp --icmp-type 8 -j ACCEPT
-A KUBE-NWPLCY-DEFAULT -m comment --comment "rule to mark traffic matching a network policy" -j MARK --set-xmark 0x10000/0x10000
-A KUBE-POD-FW-4BDGZEWEU32YM75H -m comment --comment "rule for stateful firewall for pod" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-POD-FW-4BDGZEWEU32YM75H -d 10.42.1.11/32 -m comment --comment "run through default ingress network policy chain" -j KUBE-NWPLCY-DEFAULT
-A KUBE-POD-FW-4BDGZEWEU32YM75H -m comment --comment "set mark to ACCEPT traffic that comply to network policies" -j MARK --set-xmark 0x20000/0x20000
COMMIT
`

// One minor, each mode once: about a second a cell beside the oracle
// matrix's minutes.
func TestK3sGroupOracle(t *testing.T) {
	minor := oracle.NewestWith(backend.IptablesLegacy)
	for _, b := range backend.All {
		o, notes, ok := oracle.Fit(minor, b, oracle.Options{Services: 10, Kubelet: b != backend.NFTables})
		for _, n := range notes {
			t.Logf("%s/%s: %s", minor, b, n)
		}
		if !ok {
			t.Fatalf("the %s oracle has no %s proxier", minor, b)
		}
		t.Run(string(b), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			runK3sGroupCell(t, minor, b, o)
		})
	}
}

func runK3sGroupCell(t *testing.T, minor string, b backend.Backend, o oracle.Options) {
	kv, err := rke2.ParseVersion(minor)
	if err != nil {
		t.Fatal(err)
	}
	tools(t, b)
	for _, ib := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		nstest.Tool(t, ruleload.Argv(ib, rules.IPv4)[0])
	}
	oracle.Program(t, minor, b, o)
	// Where k3s's flannel and kube-router write next to kube-proxy in b
	// (iptables only), and the other iptables backend.
	home, other := b, backend.IptablesLegacy
	if b == backend.NFTables {
		home = backend.IptablesNFT
	}
	if home == backend.IptablesLegacy {
		other = backend.IptablesNFT
	}
	load := func(in backend.Backend, payload string) {
		t.Helper()
		nstest.Feed(t, payload, ruleload.Argv(in, rules.IPv4)...)
	}
	judge := func(kind distro.Kind) *verify.Result {
		t.Helper()
		opts := verify.Options{Expect: b, ExpectSource: "--expect", Kubernetes: kv, Families: []rules.Family{rules.IPv4},
			SingleStackReason: "the oracle programs IPv4 only", Reader: verify.NewReader(hostfs.New("/")), Distribution: kind}
		if kind == distro.RKE2 {
			canal := cni.NewSetup(nil, "", nil)
			opts.CNI = &canal
		}
		res, err := verify.Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	load(home, flannelIptables+kubeRouterIptables)
	if res := judge(distro.K3s); !res.OK {
		t.Errorf("k3s, kube-proxy %s in %s, flannel and kube-router in %s: want ok\n%s", minor, b, home, report(res))
	}
	if b == backend.NFTables {
		res := judge(distro.RKE2)
		if !hasFinding(res, verify.KindCNIOtherBackend, backend.IptablesNFT, "") || !strings.Contains(report(res), "in a HelmChartConfig for rke2-canal set flannel.enableNFTables: true") {
			t.Errorf("RKE2 with Canal, kube-proxy in nftables, flannel in iptables-nft: want RKE2's finding and chart fix\n%s", report(res))
		}
	}

	// A k3s start that once ran the other iptables left flannel's there.
	load(other, flannelIptables)
	res := judge(distro.K3s)
	text := report(res)
	if res.OK || len(res.Findings) != 1 || !hasFinding(res, verify.KindStranded, other, "") {
		t.Fatalf("k3s, flannel's chains also in %s: want one stranded finding there\n%s", other, text)
	}
	for _, want := range []string{
		"10 rule(s) of k3s's flannel stranded in " + string(other),
		"2 chain(s): ", "ipv4 filter FLANNEL-FWD", "ipv4 nat FLANNEL-POSTRTG",
		"restart k3s (systemctl restart k3s, or k3s-agent on agents) so its ExecStartPre rke2-proxy-backend apply resets the links",
		"rke2-proxy-backend switch --to " + string(b),
		"then remove the old chains with rke2-proxy-backend cleanup --backend " + string(other),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the finding does not say %q:\n%s", want, text)
		}
	}
}
