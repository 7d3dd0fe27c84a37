package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// KindCNIOtherBackend: the CNI's own rules sit in another backend than the
// one that matches kube-proxy's, so pods reach some Services and not others
// (Felix's Auto backend guessing wrong, flannel without enableNFTables,
// portmap following the host's iptables alternative).
const KindCNIOtherBackend = "cni-other-backend"

// findCNIChains lists, per CNI component, the chains of rs that hold its
// rules: the chains named by it (cali-*, FLANNEL-*, CILIUM_*, CNI-HOSTPORT-*,
// CNI-DN-*), and, for a writer without chains of its own in rs (NodeLocal
// DNS), the built-in chains holding its commented rules. A jump from a base
// chain into a named chain is not counted twice: the named chain stands for
// it. Each list is sorted, "<family> <table> <chain>".
//
// The nftables reader returns only kube-proxy's own table: the CNIs' own
// native tables come from fillCNI's table list (cni.TableOwner).
// kube-router's chains count only where k3s runs it, as one of g.
func (g group) findCNIChains(rs *rules.Ruleset) map[cni.Owner][]string {
	if rs == nil {
		return nil
	}
	named := map[cni.Owner][]string{}
	holding := map[cni.Owner]map[string]bool{}
	for _, t := range rs.Tables {
		for _, c := range t.Chains {
			where := fmt.Sprintf("%s %s %s", t.Family, t.Name, c.Name)
			if o := cni.ChainOwner(c.Name); o != cni.OwnerNone {
				if o == cni.OwnerKubeRouter && !g.has(o) {
					// RKE2 ships no kube-router, and k3s runs none
					// with disable-network-policy: one an operator
					// runs picks its own iptables and is no one's CNI.
					continue
				}
				named[o] = append(named[o], where)
				continue
			}
			for _, r := range c.Rules {
				if o := cni.RuleCommentOwner(r.Comment); o != cni.OwnerNone && (o != cni.OwnerKubeRouter || g.has(o)) {
					if holding[o] == nil {
						holding[o] = map[string]bool{}
					}
					holding[o][where] = true
				}
			}
		}
	}
	for o, set := range holding {
		if len(named[o]) > 0 {
			continue
		}
		for where := range set {
			named[o] = append(named[o], where)
		}
	}
	for o := range named {
		sort.Strings(named[o])
	}
	return named
}

// cniBackend is where a CNI component's rules belong next to kube-proxy's
// backend. In the iptables modes that is kube-proxy's own backend: legacy
// and nf_tables rules must not be mixed. In nftables mode it is where each
// writer lands once it follows kube-proxy as RKE2 documents: flannel
// (enableNFTables) and rke2-calico (linuxDataplane: Nftables) write native
// nftables; Canal's Felix (felixIptablesBackend: nft), Cilium, portmap and
// NodeLocal DNS keep writing iptables rules and belong in iptables-nft,
// which shares nf_tables with kube-proxy. portmap and NodeLocal DNS speak
// iptables only, so their rules in iptables-nft are expected, not a
// finding; in iptables-legacy they are one, since the host's iptables
// alternative then points at legacy.
func cniBackend(o cni.Owner, primary string, kubeProxy backend.Backend) backend.Backend {
	if kubeProxy != backend.NFTables {
		return kubeProxy
	}
	switch {
	case o == cni.OwnerFlannel, o == cni.OwnerCalico && primary == cni.Calico:
		return backend.NFTables
	}
	return backend.IptablesNFT
}

// cniOwnerNames are the components as an operator knows them.
var cniOwnerNames = map[cni.Owner]string{
	cni.OwnerCalico:       "Calico (Felix)",
	cni.OwnerFlannel:      "flannel",
	cni.OwnerCilium:       "Cilium",
	cni.OwnerPortmap:      "the portmap CNI plugin (hostPort)",
	cni.OwnerNodeLocalDNS: "NodeLocal DNSCache",
	cni.OwnerKubeRouter:   "kube-router's network policy controller",
}

// cniFindings reports CNI rules in st when they belong in another backend
// next to kube-proxy's. setup may be nil when RKE2's CNI was not read; the
// fix then names the values for every chart that could carry the writer.
// It records the misplaced counts in st for the metrics. On k3s the
// group's own writers (flannel, kube-router) in an iptables backend are
// left to the stranded check, which judges them with kube-proxy's; their
// nftables tables of their own are a finding in any mode, since k3s's
// write iptables only.
func (g group) cniFindings(setup *cni.Setup, st *BackendState) []Finding {
	expect := g.expect
	primary := ""
	if setup != nil {
		primary = setup.Primary
	}
	owners := make([]cni.Owner, 0, len(st.cniChains))
	for o := range st.cniChains {
		owners = append(owners, o)
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i] < owners[j] })
	var out []Finding
	for _, o := range owners {
		want := cniBackend(o, primary, expect)
		member := g.has(o)
		switch {
		case member && st.Backend != backend.NFTables:
			continue
		case member:
			want = g.home(ownership.Owner(o))
		case want == st.Backend || (expect == backend.NFTables && st.Backend == backend.NFTables):
			// A CNI's own nftables tables next to kube-proxy's nftables
			// mode are where flannel (enableNFTables) and Felix (its
			// nftablesMode Auto follows kube-proxy, calico#11629) put them.
			continue
		}
		chains := st.cniChains[o]
		what := "chain(s)"
		if st.Backend == backend.NFTables {
			what = "nftables table(s) of its own"
		}
		if st.CNIOtherBackend == nil {
			st.CNIOtherBackend = map[cni.Owner]int{}
		}
		st.CNIOtherBackend[o] = len(chains)
		out = append(out, Finding{
			Kind:    KindCNIOtherBackend,
			Backend: st.Backend,
			Message: fmt.Sprintf("%s has rules in %s, but next to kube-proxy in %s they belong in %s: %d %s: %s",
				cniOwnerNames[o], st.Backend, expect, want, len(chains), what, list(chains)),
			Fix: g.cniFix(o, primary, want, st.Backend == backend.NFTables, chains),
		})
	}
	return out
}

// cniNativeTables lists the native nftables tables once per run, for the
// CNIs' own tables; a failed listing is a note, not a verdict.
func cniNativeTables(ctx context.Context, opts Options, res *Result) []rules.Table {
	if opts.NFTTables == nil {
		return nil
	}
	tables, err := opts.NFTTables(ctx)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("could not list the nftables tables, so the CNI's own nftables tables were not checked: %v", err))
		return nil
	}
	return tables
}

// fillCNI records the CNI chains of rs in st and, for nftables, the CNIs'
// own tables among native ("<family> table <name>": their chains are not
// read, the table says whose they are).
func (g group) fillCNI(st *BackendState, rs *rules.Ruleset, native []rules.Table) {
	st.cniChains = g.findCNIChains(rs)
	if st.Backend == backend.NFTables {
		for _, t := range native {
			if o := cni.TableOwner(t.Name); o != cni.OwnerNone {
				if st.cniChains == nil {
					st.cniChains = map[cni.Owner][]string{}
				}
				st.cniChains[o] = append(st.cniChains[o], fmt.Sprintf("%s table %s", t.Family, t.Name))
			}
		}
		for o := range st.cniChains {
			sort.Strings(st.cniChains[o])
		}
	}
	if len(st.cniChains) == 0 {
		return
	}
	st.CNIChains = map[cni.Owner]int{}
	for o, c := range st.cniChains {
		st.CNIChains[o] = len(c)
	}
}

// restartCNIHint follows every chart change: the CNI writes its rules in the
// new backend only when its pods restart, and the old ones stay behind.
const restartCNIHint = "; then reboot the node (or restart the CNI's pods and remove the old rules) so nothing stays in the old backend"

// felixNFTablesOff turns Felix's own nftables dataplane off (FelixConfiguration
// spec.nftablesMode: Disabled|Enabled|Auto, projectcalico/calico
// api/pkg/apis/projectcalico/v3/felixconfig.go); Canal's chart has no value
// for it.
const felixNFTablesOff = ` and Felix's own nftables dataplane off with kubectl patch felixconfiguration default --type merge -p '{"spec":{"nftablesMode":"Disabled"}}'`

// cniFix is cniFix for g's node. k3s has no HelmChartConfig for its own
// writers: a native table of k3s's flannel or kube-router is no current
// writer's (k3s's write iptables only), and an operator's Calico or flannel
// is set in its own configuration. chains are the misplaced ones.
func (g group) cniFix(o cni.Owner, primary string, want backend.Backend, native bool, chains []string) string {
	if !g.embedded() {
		return cniFix(o, primary, g.expect, want, native)
	}
	switch {
	case g.has(o):
		return fmt.Sprintf("k3s's %s writes iptables rules only (k3s#12849), through k3s's PATH iptables: no running writer of k3s owns these tables; remove them (nft delete table <family> <name> for each: %s) and restart k3s (%s)",
			cniOwnerNames[o], strings.Join(chains, ", "), g.restart())
	case o == cni.OwnerFlannel:
		return fmt.Sprintf("this flannel is not k3s's own (flannel-backend: none): set \"EnableNFTables\": %t in its net-conf.json (the kube-flannel-cfg ConfigMap) and restart its pods, then reboot the node so nothing stays in the old backend", want == backend.NFTables)
	case o == cni.OwnerCalico && !native:
		return "set Felix's backend with " + felixBackendPatch(want) + restartCNIHint
	case o == cni.OwnerCalico:
		return "turn" + strings.TrimPrefix(felixNFTablesOff, " and") + restartCNIHint
	}
	return cniFix(o, primary, g.expect, want, native)
}

// cniFix names the chart value (or host setting) that moves o into want;
// native says o's rules are nftables tables of its own.
func cniFix(o cni.Owner, primary string, expect, want backend.Backend, native bool) string {
	switch o {
	case cni.OwnerCalico:
		canal := chartFix(cni.Canal, "calico.", expect, "calico.felixIptablesBackend", felixBackend(want))
		if native {
			canal += felixNFTablesOff
		}
		calico := chartFix(cni.Calico, "installation.", expect, "installation.calicoNetwork.linuxDataplane", "Iptables")
		if expect != backend.NFTables {
			calico += " and Felix's backend with " + felixBackendPatch(want)
		}
		switch primary {
		case cni.Canal:
			return canal + restartCNIHint
		case cni.Calico:
			return calico + restartCNIHint
		}
		return canal + " (Canal) or " + calico + " (Calico)" + restartCNIHint
	case cni.OwnerFlannel:
		chart := primary
		if chart != cni.Flannel {
			chart = cni.Canal
		}
		return chartFix(chart, "flannel.", expect, "flannel.enableNFTables", "false") + restartCNIHint
	case cni.OwnerCilium:
		return "Cilium picks its iptables backend from the rules it finds at start: remove the rules in the other backend (reboot the node after kube-proxy's backend is settled) and restart the cilium pods"
	case cni.OwnerPortmap, cni.OwnerNodeLocalDNS:
		fix := hostIptablesFix(want)
		if o == cni.OwnerNodeLocalDNS {
			fix = "NodeLocal DNSCache writes iptables rules only (kubernetes/dns#682) with the host's flavour: " + fix
			if expect == backend.NFTables {
				fix += "; nftables mode cannot be run with it: set nodelocal.enabled: false for " + cni.CoreDNSChart
			}
		} else {
			fix = "portmap runs the host's iptables binary: " + fix
		}
		return fix
	}
	return "move " + string(o) + "'s rules to " + string(want)
}

// chartFix says what to set in a HelmChartConfig for name's chart: in
// nftables mode the values internal/cni knows (those starting with prefix),
// otherwise key: value, which keeps the writer on iptables.
func chartFix(name, prefix string, expect backend.Backend, key, value string) string {
	chart, values, _ := cni.NFTablesValues(name)
	set := []string{key + ": " + value}
	if expect == backend.NFTables {
		set = set[:0]
		for _, v := range values {
			if strings.HasPrefix(v.Key, prefix) {
				set = append(set, fmt.Sprintf("%s: %v", v.Key, v.Value))
			}
		}
	}
	return fmt.Sprintf("in a HelmChartConfig for %s set %s", chart, strings.Join(set, ", "))
}

// felixBackend is rke2-canal's calico.felixIptablesBackend for want.
func felixBackend(want backend.Backend) string {
	if want == backend.IptablesLegacy {
		return "legacy"
	}
	return "nft"
}

// felixBackendPatch sets FelixConfiguration's spec.iptablesBackend for want.
func felixBackendPatch(want backend.Backend) string {
	return fmt.Sprintf(`kubectl patch felixconfiguration default --type merge -p '{"spec":{"iptablesBackend":"%s"}}'`, felixConfigBackend(want))
}

// felixConfigBackend is FelixConfiguration's spec.iptablesBackend for want.
func felixConfigBackend(want backend.Backend) string {
	if want == backend.IptablesLegacy {
		return "Legacy"
	}
	return "NFT"
}

// hostIptablesFix points the host's iptables alternative at want's flavour.
func hostIptablesFix(want backend.Backend) string {
	alt, pkg := "iptables-nft", "iptables-nft"
	if want == backend.IptablesLegacy {
		alt, pkg = "iptables-legacy", "iptables-legacy"
	}
	return fmt.Sprintf("update-alternatives --set iptables /usr/sbin/%s; update-alternatives --set ip6tables /usr/sbin/ip6%s (on EL install the %s package), then reboot the node so the rules are written again in %s",
		alt, strings.TrimPrefix(alt, "ip"), pkg, want)
}
