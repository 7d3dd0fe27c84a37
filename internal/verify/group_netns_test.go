package verify_test

// k3s's owner group on real rules: kube-proxy's real proxier (the oracle,
// one minor) programs its backend in a throwaway namespace, and rules
// shaped as k3s's flannel and kube-router's network policy controller
// write them (internal/testkit/k3sgroup, which the cleanup and switch
// tests and the boot test's stand-in write too) are loaded beside it with the real iptables-restore of a
// backend. verify judges them as k3s does them, and nftables mode's also
// as RKE2 with Canal, whose flannel belongs in native nftables there.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/k3sgroup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

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

	load(home, k3sgroup.Restore(k3sgroup.Flannel, k3sgroup.KubeRouter))
	if res := judge(distro.Kind("k3s")); !res.OK {
		t.Errorf("k3s, kube-proxy %s in %s, flannel and kube-router in %s: want ok\n%s", minor, b, home, report(res))
	}
	if b == backend.NFTables {
		res := judge(distro.RKE2)
		if !hasFinding(res, verify.KindCNIOtherBackend, backend.IptablesNFT, "") || !strings.Contains(report(res), "in a HelmChartConfig for rke2-canal set flannel.enableNFTables: true") {
			t.Errorf("RKE2 with Canal, kube-proxy in nftables, flannel in iptables-nft: want RKE2's finding and chart fix\n%s", report(res))
		}
	}

	// A k3s start that once ran the other iptables left flannel's there.
	load(other, k3sgroup.Restore(k3sgroup.Flannel))
	res := judge(distro.Kind("k3s"))
	text := report(res)
	if res.OK || len(res.Findings) != 1 || !hasFinding(res, verify.KindStranded, other, "") {
		t.Fatalf("k3s, flannel's chains also in %s: want one stranded finding there\n%s", other, text)
	}
	for _, want := range []string{
		fmt.Sprintf("%d rule(s) of k3s's flannel stranded in %s", len(k3sgroup.Flannel.Rules), other),
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
