package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// k3sWriters are the chains k3s's flannel and kube-router hook into the
// built-ins (names as cni.ChainOwner knows them; shapes as in
// group_netns_test.go, which loads them for real).
var k3sWriters = map[string][]struct{ hook, chain, comment string }{
	"flannel":     {{"nat POSTROUTING", "FLANNEL-POSTRTG", "flanneld masq"}, {"filter FORWARD", "FLANNEL-FWD", "flanneld forward"}},
	"kube-router": {{"filter FORWARD", "KUBE-ROUTER-FORWARD", "kube-router netpol"}, {"filter INPUT", "KUBE-ROUTER-INPUT", "kube-router netpol"}, {"filter", "KUBE-NWPLCY-DEFAULT", ""}},
	"calico":      {{"filter FORWARD", "cali-FORWARD", "cali:wUHhoiAYhphO9Mso"}},
}

// withWriters is rs (nil: an empty ruleset of b) with the chains of the
// named writers and the built-in chains' jumps into them added.
func withWriters(rs *rules.Ruleset, b backend.Backend, writers ...string) *rules.Ruleset {
	if rs == nil {
		rs = &rules.Ruleset{Backend: b}
	}
	rs = rules.Clone(rs)
	table := func(name string) *rules.Table {
		for i := range rs.Tables {
			if t := &rs.Tables[i]; t.Family == rules.IPv4 && t.Name == name {
				return t
			}
		}
		rs.Tables = append(rs.Tables, rules.Table{Family: rules.IPv4, Name: name})
		return &rs.Tables[len(rs.Tables)-1]
	}
	chain := func(t *rules.Table, name string) *rules.Chain {
		for i := range t.Chains {
			if t.Chains[i].Name == name {
				return &t.Chains[i]
			}
		}
		t.Chains = append(t.Chains, rules.Chain{Name: name})
		return &t.Chains[len(t.Chains)-1]
	}
	for _, w := range writers {
		for _, c := range k3sWriters[w] {
			tname, hook, _ := strings.Cut(c.hook, " ")
			t := table(tname)
			chain(t, c.chain).Rules = append(chain(t, c.chain).Rules, rules.Rule{Text: "-j RETURN"})
			if hook != "" {
				h := chain(t, hook)
				h.Rules = append(h.Rules, rules.Rule{Text: "-m comment --comment \"" + c.comment + "\" -j " + c.chain, Comment: c.comment, Jump: c.chain})
			}
		}
	}
	return rs
}

// On k3s flannel's and kube-router's chains belong with kube-proxy's: in
// its own backend in the iptables modes, in iptables-nft next to nftables
// mode. A copy in any other backend is stranded, with k3s's fix; RKE2
// judges the same rules as it always has.
func TestK3sGroupPlacement(t *testing.T) {
	both := []string{"flannel", "kube-router"}
	cases := []struct {
		name    string
		kind    distro.Kind
		expect  backend.Backend
		net     *facts.K3sNetwork
		in      backend.Backend // where the writers' chains are
		writers []string
		want    string
		texts   []string
	}{
		{"k3s legacy, all in legacy", distro.Kind("k3s"), backend.IptablesLegacy, nil, backend.IptablesLegacy, both, "", nil},
		{"k3s iptables-nft, all in iptables-nft", distro.Kind("k3s"), backend.IptablesNFT, nil, backend.IptablesNFT, both, "", nil},
		// The former false finding: flannel on iptables-nft beside nftables mode.
		{"k3s nftables, flannel and kube-router in iptables-nft", distro.Kind("k3s"), backend.NFTables, nil, backend.IptablesNFT, both, "", nil},
		{"RKE2 nftables, flannel in iptables-nft", distro.RKE2, backend.NFTables, nil, backend.IptablesNFT, both,
			"cni-other-backend@iptables-nft", []string{"in a HelmChartConfig for rke2-canal set flannel.enableNFTables: true"}},
		{"k3s iptables-nft, flannel in legacy", distro.Kind("k3s"), backend.IptablesNFT, nil, backend.IptablesLegacy, []string{"flannel"},
			"stranded-rules@iptables-legacy", []string{
				"iptables-legacy: STRANDED: 2 chains, 4 rules of k3s's flannel\n",
				"4 rule(s) of k3s's flannel stranded in iptables-legacy while kube-proxy uses iptables-nft; 2 chain(s): ipv4 filter FLANNEL-FWD, ipv4 nat FLANNEL-POSTRTG; 2 jump(s)",
				"restart k3s (systemctl restart k3s-agent.service) so its ExecStartPre rke2-proxy-backend apply resets the links", "rke2-proxy-backend switch --to iptables-nft",
				"then remove the old chains with rke2-proxy-backend cleanup --backend iptables-legacy"}},
		{"RKE2 iptables-nft, flannel in legacy", distro.RKE2, backend.IptablesNFT, nil, backend.IptablesLegacy, both,
			"cni-other-backend@iptables-legacy", []string{"rke2-canal set flannel.enableNFTables: false"}},
		{"k3s legacy, kube-router in iptables-nft", distro.Kind("k3s"), backend.IptablesLegacy, nil, backend.IptablesNFT, []string{"kube-router"},
			"stranded-rules@iptables-nft", []string{"of k3s's kube-router's network policy controller stranded in iptables-nft", "cleanup --backend iptables-nft"}},
		{"k3s nftables, all in legacy", distro.Kind("k3s"), backend.NFTables, nil, backend.IptablesLegacy, both,
			"stranded-rules@iptables-legacy", []string{"of k3s's flannel, kube-router's network policy controller stranded in iptables-legacy while kube-proxy uses nftables (flannel's and kube-router's iptables rules belong in iptables-nft)", "switch --to nftables"}},
		// A writer k3s does not run is an operator's, judged as a CNI.
		{"k3s without network policy, an operator's kube-router in legacy", distro.Kind("k3s"), backend.IptablesNFT, &facts.K3sNetwork{Flannel: true}, backend.IptablesLegacy, []string{"kube-router"}, "", nil},
		{"k3s without flannel, an operator's flannel in legacy", distro.Kind("k3s"), backend.IptablesNFT, &facts.K3sNetwork{NetworkPolicy: true}, backend.IptablesLegacy, []string{"flannel"},
			"cni-other-backend@iptables-legacy", []string{`this flannel is not k3s's own (flannel-backend: none): set "EnableNFTables": false in its net-conf.json`}},
		{"k3s, an operator's Calico in legacy", distro.Kind("k3s"), backend.IptablesNFT, &facts.K3sNetwork{}, backend.IptablesLegacy, []string{"calico"},
			"cni-other-backend@iptables-legacy", []string{`fix: set Felix's backend with kubectl patch felixconfiguration default --type merge -p '{"spec":{"iptablesBackend":"NFT"}}'; then reboot`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kp := skeleton(t, c.expect, rke2.KubeVersion{}, 2)
			var sets []*rules.Ruleset
			if c.in == c.expect {
				sets = append(sets, withWriters(kp, c.in, c.writers...))
			} else {
				sets = append(sets, kp, withWriters(nil, c.in, c.writers...))
			}
			opts := Options{Expect: c.expect, Reader: newFake(t, sets...), Distribution: c.kind, K3s: c.net}
			if c.kind == distro.Kind("k3s") {
				opts.Units = []string{"k3s-agent.service"}
			} else {
				opts.CNI = canalSetup()
			}
			res := run(t, opts)
			if got := kinds(res); got != c.want {
				t.Fatalf("findings %q, want %q\n%s", got, c.want, report(res))
			}
			text := report(res)
			for _, s := range c.texts {
				if !strings.Contains(text, s) {
					t.Errorf("report lacks %q:\n%s", s, text)
				}
			}
		})
	}
}

// kube-proxy's own chains left in the other backend are stranded on k3s
// too, and the counts behind the metrics hold the whole group's there.
func TestK3sKubeProxyStranded(t *testing.T) {
	legacy := withWriters(skeleton(t, backend.IptablesLegacy, rke2.KubeVersion{}, 0), backend.IptablesLegacy, "flannel")
	nft := skeleton(t, backend.IptablesNFT, rke2.KubeVersion{}, 0)
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: newFake(t, legacy, nft), Distribution: distro.Kind("k3s")})
	// kubelet runs inside k3s too: its hints left in legacy are leftovers.
	if got := kinds(res); got != "stranded-rules@iptables-legacy,kubelet-hint@iptables-legacy" {
		t.Fatalf("findings %q\n%s", got, report(res))
	}
	if f := res.Findings[0]; !strings.Contains(f.Message, "of k3s's kube-proxy, flannel stranded in iptables-legacy") || !strings.Contains(f.Fix, "systemctl restart k3s, or k3s-agent on agents") {
		t.Errorf("finding %+v", f)
	}
	if f := res.Findings[1]; !strings.Contains(f.Message, "kubelet, which runs inside k3s, already wrote its own in iptables-nft") {
		t.Errorf("hint finding %+v", f)
	}
	kpOnly := run(t, Options{Expect: backend.IptablesNFT, Reader: newFake(t, skeleton(t, backend.IptablesLegacy, rke2.KubeVersion{}, 0), nft)})
	for i, st := range res.Backends {
		if st.Backend == backend.IptablesLegacy && st.KubeProxyChains != kpOnly.Backends[i].KubeProxyChains+2 {
			t.Errorf("k3s counts %d chains stranded in legacy, want kube-proxy's %d plus flannel's 2", st.KubeProxyChains, kpOnly.Backends[i].KubeProxyChains)
		}
	}
}

// ForHost finds k3s from its units and reads k3s's config for its own
// writers instead of RKE2's CNI.
func TestForHostOnK3s(t *testing.T) {
	h := withPlan(t, dualStack(t).K3sUnit("k3s-agent", "agent").K3sConfig("config.yaml", "disable-network-policy: true\n"),
		plan.Plan{Decision: plan.Decision{Backend: backend.NFTables}})
	opts, unknown, err := ForHost(Host{Root: h.Root()})
	if err != nil || unknown != nil {
		t.Fatalf("ForHost = %+v, %v", unknown, err)
	}
	if opts.Distribution != distro.Kind("k3s") || opts.CNI != nil || opts.K3s == nil || !opts.K3s.Flannel || opts.K3s.NetworkPolicy || strings.Join(opts.Units, ",") != "k3s-agent.service" {
		t.Errorf("distribution %q, CNI %+v, k3s %+v, units %v: want k3s's config read (flannel on, network policy off) and its unit", opts.Distribution, opts.CNI, opts.K3s, opts.Units)
	}
	if g := newGroup(opts); g.has(cni.OwnerKubeRouter) || !g.has(cni.OwnerFlannel) {
		t.Errorf("group %v: want kube-proxy and flannel, not the kube-router k3s does not run", g.members)
	}
}

// On k3s the fixes every check shares name k3s's unit, journal and
// drop-in, not RKE2's, as Run and the later checks make them (no caller
// rewords them); the same run as RKE2 keeps RKE2's words.
func TestK3sWordsInSharedFixes(t *testing.T) {
	for _, c := range []struct {
		kind       distro.Kind
		want, not  string
		unitsFound []string
	}{
		{distro.Kind("k3s"), "restart kube-proxy so it rebuilds its rules: systemctl restart k3s-agent.service", "rke2-server", []string{"k3s-agent.service"}},
		{distro.RKE2, "restart kube-proxy so it rebuilds its rules: systemctl restart rke2-server (rke2-agent on agents)", "k3s", nil},
	} {
		opts := Options{Expect: backend.IptablesNFT, Reader: newFake(t), Distribution: c.kind, Units: c.unitsFound}
		res := run(t, opts)
		text := report(res)
		if !strings.Contains(text, "[missing-table]") || !strings.Contains(text, c.want) || strings.Contains(text, c.not) {
			t.Errorf("%s, nothing synced: want a missing-table fix saying %q, never %q:\n%s", c.kind, c.want, c.not, text)
		}
	}
	g := group{kind: distro.Kind("k3s"), units: []string{"k3s-nas.service"}}
	fixed := g.syncFailureFix() + "; " + g.fixFor([]string{"localhost-nodeport-x"})
	for _, want := range []string{"k3s's journal, journalctl -u k3s-nas", "restart k3s (systemctl restart k3s-nas.service)", "rebuilds its rules: systemctl restart k3s-nas.service"} {
		if !strings.Contains(fixed, want) {
			t.Errorf("k3s's words %q lack %q", fixed, want)
		}
	}
	if rest := strings.ReplaceAll(fixed, "rke2-proxy-backend", ""); strings.Contains(rest, "rke2") || strings.Contains(rest, "RKE2") {
		t.Errorf("k3s's words %q keep RKE2's", fixed)
	}
	// A rise watch finds between two runs is worded for the run's node.
	prev := &kubeproxy.Figures{Failures: []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesSync, "IPv4", 1)}}
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: newFake(t), Distribution: distro.Kind("k3s"), Units: []string{"k3s-nas.service"}})
	res.KubeProxy = &kubeproxy.Figures{Failures: []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesSync, "IPv4", 4)}}
	res.AddSyncFailures(prev, time.Minute, time.Now())
	if text := report(res); !strings.Contains(text, "k3s's journal, journalctl -u k3s-nas") {
		t.Errorf("k3s, sync failures added later: want k3s's journal named:\n%s", text)
	}
}

// k3s's flannel writes iptables only, even with a flannel-conf that asks
// for nftables (k3s#12849): a flannel table of its own beside nftables
// mode is no running writer's, where RKE2 expects it there.
func TestK3sFlannelNativeTable(t *testing.T) {
	tables := map[cni.Owner][]string{cni.OwnerFlannel: {"ipv4 table flannel-ipv4"}}
	k3s := newGroup(Options{Expect: backend.NFTables, Distribution: distro.Kind("k3s")})
	got := k3s.cniFindings(nil, &BackendState{Backend: backend.NFTables, cniChains: tables})
	if len(got) != 1 || !strings.Contains(got[0].Message, "they belong in iptables-nft: 1 nftables table(s) of its own") || !strings.Contains(got[0].Fix, "nft delete table <family> <name> for each: ipv4 table flannel-ipv4") {
		t.Errorf("k3s: %+v", got)
	}
	if got := (group{expect: backend.NFTables}).cniFindings(canalSetup(), &BackendState{Backend: backend.NFTables, cniChains: tables}); len(got) != 0 {
		t.Errorf("RKE2: %+v", got)
	}
}
