// Package k3sgroup holds the chains k3s's embedded flannel and kube-router
// network policy controller keep (the two writers that share kube-proxy's
// iptables on k3s, ownership.K3s), shaped as theirs are: flannel's from its
// iptables traffic manager (pkg/trafficmngr/iptables: FLANNEL-POSTRTG
// hooked from nat POSTROUTING with the "flanneld masq" comment, FLANNEL-FWD
// from filter FORWARD with "flanneld forward"), kube-router's from its
// netpol controller (KUBE-ROUTER-INPUT/-FORWARD/-OUTPUT inserted first in
// the filter built-ins with a "kube-router netpol - <hash>" comment, and
// KUBE-NWPLCY-DEFAULT, which marks traffic a policy accepted). The netns
// tests load them with iptables-restore (Restore); the boot test's
// stand-in runs them one iptables call at a time on k3s's PATH, as the
// real writers do. IPv4 only: a single-stack node's.
package k3sgroup

import (
	"fmt"
	"strings"
)

// Rule is one rule: appended to Chain (or inserted first, as kube-router
// hooks its chains), Args as iptables takes them after the chain name.
type Rule struct {
	Table, Chain string
	Insert       bool
	Args         []string
}

// Writer is one of the group's companions of kube-proxy: the chains it
// creates and its rules, jumps from the built-ins included.
type Writer struct {
	Name   string // its ownership.Owner
	Chains []Chain
	Rules  []Rule
}

// Chain is a chain a writer creates.
type Chain struct{ Table, Name string }

const (
	podCIDR     = "10.42.0.0/16" // k3s's default cluster-cidr
	nodePodCIDR = "10.42.1.0/24" // this node's share of it
	serviceCIDR = "10.43.0.0/16" // k3s's default service-cidr
	podIP       = "10.42.1.11/32"
	podChain    = "KUBE-POD-FW-4BDGZEWEU32YM75H"
)

func comment(text string) []string { return []string{"-m", "comment", "--comment", text} }

func with(args []string, more ...string) []string {
	return append(append([]string{}, args...), more...)
}

// Flannel is k3s's flannel with its default vxlan backend and ip-masq on a
// node whose pod CIDR is 10.42.1.0/24: masqRules and forwardRules of
// flannel's iptables traffic manager, the jumps from POSTROUTING and
// FORWARD first. 0x4000 is kube-proxy's masquerade mark, which flannel
// leaves to kube-proxy.
var Flannel = Writer{
	Name:   "flannel",
	Chains: []Chain{{"nat", "FLANNEL-POSTRTG"}, {"filter", "FLANNEL-FWD"}},
	Rules: []Rule{
		{Table: "nat", Chain: "POSTROUTING", Args: with(comment("flanneld masq"), "-j", "FLANNEL-POSTRTG")},
		masq([]string{"-m", "mark", "--mark", "0x4000/0x4000"}, "RETURN"),
		masq([]string{"-s", nodePodCIDR, "-d", podCIDR}, "RETURN"),
		masq([]string{"-s", podCIDR, "-d", nodePodCIDR}, "RETURN"),
		masq([]string{"!", "-s", podCIDR, "-d", nodePodCIDR}, "RETURN"),
		masq([]string{"-s", podCIDR, "!", "-d", "224.0.0.0/4"}, "MASQUERADE", "--random-fully"),
		masq([]string{"!", "-s", podCIDR, "-d", podCIDR}, "MASQUERADE", "--random-fully"),
		{Table: "filter", Chain: "FORWARD", Args: with(comment("flanneld forward"), "-j", "FLANNEL-FWD")},
		{Table: "filter", Chain: "FLANNEL-FWD", Args: with([]string{"-s", podCIDR}, with(comment("flanneld forward"), "-j", "ACCEPT")...)},
		{Table: "filter", Chain: "FLANNEL-FWD", Args: with([]string{"-d", podCIDR}, with(comment("flanneld forward"), "-j", "ACCEPT")...)},
	},
}

// masq is one rule of FLANNEL-POSTRTG: match, flannel's comment, target.
func masq(match []string, target ...string) Rule {
	return Rule{Table: "nat", Chain: "FLANNEL-POSTRTG", Args: with(match, with(comment("flanneld masq"), append([]string{"-j"}, target...)...)...)}
}

// KubeRouter is k3s's network policy controller as a k3s node's
// iptables-save shows it with one pod under a policy: its top-level chains
// hooked first into the built-ins, the accept of traffic its policies
// marked 0x20000, KUBE-NWPLCY-DEFAULT (icmp allowed, then the policy mark)
// and the pod's KUBE-POD-FW-<hash> chain.
var KubeRouter = Writer{
	Name: "kube-router",
	Chains: []Chain{
		{"filter", "KUBE-ROUTER-INPUT"}, {"filter", "KUBE-ROUTER-FORWARD"}, {"filter", "KUBE-ROUTER-OUTPUT"}, {"filter", "KUBE-NWPLCY-DEFAULT"}, {"filter", podChain},
	},
	Rules: []Rule{
		{Table: "filter", Chain: "INPUT", Insert: true, Args: with(comment("kube-router netpol - 4IA2OSFRMVNDXBVV"), "-j", "KUBE-ROUTER-INPUT")},
		{Table: "filter", Chain: "FORWARD", Insert: true, Args: with(comment("kube-router netpol - TEMCG2JMHZYE7H7T"), "-j", "KUBE-ROUTER-FORWARD")},
		{Table: "filter", Chain: "OUTPUT", Insert: true, Args: with(comment("kube-router netpol - VEAAIY32XVBHCSCY"), "-j", "KUBE-ROUTER-OUTPUT")},
		{Table: "filter", Chain: "FORWARD", Args: with(comment("KUBE-ROUTER rule to explicitly ACCEPT traffic that comply to network policies"), "-m", "mark", "--mark", "0x20000/0x20000", "-j", "ACCEPT")},
		{Table: "filter", Chain: "KUBE-ROUTER-INPUT", Args: with([]string{"-d", serviceCIDR}, with(comment("allow traffic to primary cluster IP range"), "-j", "RETURN")...)},
		{Table: "filter", Chain: "KUBE-ROUTER-FORWARD", Args: with([]string{"-d", podIP}, with(comment("rule to jump traffic destined to POD name:redis namespace: default to chain "+podChain), "-j", podChain)...)},
		{Table: "filter", Chain: "KUBE-NWPLCY-DEFAULT", Args: with([]string{"-p", "icmp"}, with(comment("allow icmp echo requests"), "-m", "icmp", "--icmp-type", "8", "-j", "ACCEPT")...)},
		{Table: "filter", Chain: "KUBE-NWPLCY-DEFAULT", Args: with(comment("rule to mark traffic matching a network policy"), "-j", "MARK", "--set-xmark", "0x10000/0x10000")},
		{Table: "filter", Chain: podChain, Args: with(comment("rule for stateful firewall for pod"), "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")},
		{Table: "filter", Chain: podChain, Args: with([]string{"-d", podIP}, with(comment("run through default ingress network policy chain"), "-j", "KUBE-NWPLCY-DEFAULT")...)},
		{Table: "filter", Chain: podChain, Args: with(comment("set mark to ACCEPT traffic that comply to network policies"), "-j", "MARK", "--set-xmark", "0x20000/0x20000")},
	},
}

// Objects counts what ownership finds of w in a backend it wrote: its
// chains, and its rules in the built-in chains (the jumps into its chains,
// kube-router's commented accept).
func (w Writer) Objects() int {
	n := len(w.Chains)
	for _, r := range w.Rules {
		switch r.Chain {
		case "PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING":
			n++
		}
	}
	return n
}

// Restore is iptables-restore --noflush input writing ws' chains and
// rules (IPv4), as each writer would leave them.
func Restore(ws ...Writer) string {
	var b strings.Builder
	for _, table := range []string{"nat", "filter"} {
		fmt.Fprintf(&b, "*%s\n", table)
		for _, w := range ws {
			for _, c := range w.Chains {
				if c.Table == table {
					fmt.Fprintf(&b, ":%s - [0:0]\n", c.Name)
				}
			}
		}
		for _, w := range ws {
			for _, r := range w.Rules {
				if r.Table != table {
					continue
				}
				op := "-A " + r.Chain
				if r.Insert {
					op = "-I " + r.Chain + " 1"
				}
				fmt.Fprintf(&b, "%s %s\n", op, quote(r.Args))
			}
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}

// quote joins args for a restore line: an argument with a space in
// double quotes, as iptables-save prints comments.
func quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if strings.ContainsAny(a, " \t") {
			out[i] = `"` + a + `"`
		}
	}
	return strings.Join(out, " ")
}
