package expected

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// jump is one base-chain jump rule kube-proxy or kubelet ensures.
type jump struct {
	table, src, dst, comment string
	extra                    string // matches before the comment, in iptables-save order
}

const ctNew = "-m conntrack --ctstate NEW"

// kubeProxyJumps is pkg/proxy/iptables/proxier.go iptablesJumpChains followed
// by iptablesKubeletJumpChains, in source order: kube-proxy ensures each
// with EnsureRule(Prepend), in both families.
var kubeProxyJumps = []jump{
	{"filter", "INPUT", vocab.ChainExternalServices, "kubernetes externally-visible service portals", ctNew},
	{"filter", "FORWARD", vocab.ChainExternalServices, "kubernetes externally-visible service portals", ctNew},
	{"filter", "INPUT", vocab.ChainNodePorts, "kubernetes health check service ports", ""},
	{"filter", "FORWARD", vocab.ChainServices, "kubernetes service portals", ctNew},
	{"filter", "OUTPUT", vocab.ChainServices, "kubernetes service portals", ctNew},
	{"filter", "FORWARD", vocab.ChainForward, "kubernetes forwarding rules", ""},
	{"filter", "INPUT", vocab.ChainProxyFirewall, "kubernetes load balancer firewall", ctNew},
	{"filter", "OUTPUT", vocab.ChainProxyFirewall, "kubernetes load balancer firewall", ctNew},
	{"filter", "FORWARD", vocab.ChainProxyFirewall, "kubernetes load balancer firewall", ctNew},
	{"nat", "OUTPUT", vocab.ChainServices, "kubernetes service portals", ""},
	{"nat", "PREROUTING", vocab.ChainServices, "kubernetes service portals", ""},
	{"nat", "POSTROUTING", vocab.ChainPostrouting, "kubernetes postrouting rules", ""},
	{"filter", "INPUT", vocab.ChainFirewall, "", ""},
	{"filter", "OUTPUT", vocab.ChainFirewall, "", ""},
}

// baseJumpCount is how many base-chain jumps each family carries.
var baseJumpCount = len(kubeProxyJumps)

// builtins are the built-in chains of each table kube-proxy touches, in
// hook order, with the hook name the readers use.
var builtins = map[string][]string{
	"filter": {"INPUT", "FORWARD", "OUTPUT"},
	"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
	"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
}

// iptablesTableOrder is the order tables are rendered in (the order kube-proxy
// and iptables-save use for the ones it touches).
var iptablesTableOrder = []string{"filter", "nat", "mangle"}

const (
	localnetComment  = "block incoming localnet connections"
	nodeportsComment = "kubernetes service nodeports; NOTE: this must be the last rule in this chain"
	masqMark         = "0x4000/0x4000"
	dropMark         = "0x8000/0x8000"
	forwardComment   = "kubernetes forwarding rules"
	forwardCTComment = "kubernetes forwarding conntrack rule"
	snatComment      = "kubernetes service traffic requiring SNAT"
)

// builder collects chains per table while keeping rule order.
type builder struct {
	family rules.Family
	tables map[string]map[string]*rules.Chain
}

func (b *builder) chain(table, name string) *rules.Chain {
	t := b.tables[table]
	if t == nil {
		t = map[string]*rules.Chain{}
		b.tables[table] = t
	}
	c := t[name]
	if c == nil {
		c = &rules.Chain{Name: name, Rules: []rules.Rule{}}
		t[name] = c
	}
	return c
}

func (b *builder) add(table, chain string, r rules.Rule) {
	c := b.chain(table, chain)
	c.Rules = append(c.Rules, r)
}

func (b *builder) prepend(table, chain string, r rules.Rule) {
	c := b.chain(table, chain)
	c.Rules = append([]rules.Rule{r}, c.Rules...)
}

// jumpRule renders a jump the way iptables-save prints it.
func jumpRule(j jump) rules.Rule {
	text := ""
	if j.extra != "" {
		text = j.extra + " "
	}
	if j.comment != "" {
		text += "-m comment --comment " + vocab.Quote(j.comment) + " "
	}
	return rules.Rule{Text: text + "-j " + j.dst, Comment: j.comment, Jump: j.dst}
}

// iptablesTables renders kubelet's and kube-proxy's fixed chains for one
// family as they stand after kube-proxy's first sync with no services.
func iptablesTables(kv rke2.KubeVersion, f rules.Family) []rules.Table {
	b := kubeletTables(f)
	// kube-proxy: EnsureChain + EnsureRule(Prepend) for each jump, so a
	// jump already present (kubelet's) keeps its place.
	for _, j := range kubeProxyJumps {
		b.chain(j.table, j.dst)
		r := jumpRule(j)
		if !hasRule(b.chain(j.table, j.src), r.Text) {
			b.prepend(j.table, j.src, r)
		}
	}
	for _, t := range []string{"mangle", "nat", "filter"} {
		b.chain(t, vocab.ChainProxyCanary)
	}
	// The restore payload's fixed rules.
	b.add("filter", vocab.ChainForward, rules.Rule{Text: "-m conntrack --ctstate INVALID -j DROP"})
	b.add("filter", vocab.ChainForward, rules.Rule{
		Text:    "-m comment --comment " + vocab.Quote(forwardComment) + " -m mark --mark " + masqMark + " -j ACCEPT",
		Comment: forwardComment,
	})
	b.add("filter", vocab.ChainForward, rules.Rule{
		Text:    "-m comment --comment " + vocab.Quote(forwardCTComment) + " -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
		Comment: forwardCTComment,
	})
	b.chain("nat", vocab.ChainNodePorts)
	b.add("nat", vocab.ChainMarkMasq, rules.Rule{Text: "-j MARK --set-xmark " + masqMark})
	b.add("nat", vocab.ChainPostrouting, rules.Rule{Text: "-m mark ! --mark " + masqMark + " -j RETURN"})
	b.add("nat", vocab.ChainPostrouting, rules.Rule{Text: "-j MARK --set-xmark 0x4000/0x0"})
	b.add("nat", vocab.ChainPostrouting, rules.Rule{
		Text:    "-m comment --comment " + vocab.Quote(snatComment) + " -j MASQUERADE --random-fully",
		Comment: snatComment,
	})
	if !kv.AtLeast(1, 28) {
		b.add("nat", vocab.ChainMarkDrop, rules.Rule{Text: "-j MARK --set-xmark " + dropMark})
	}
	// KUBE-SERVICES in nat ends with the jump to KUBE-NODEPORTS; services
	// insert their rules before it (services.go).
	b.add("nat", vocab.ChainServices, nodePortsRule())
	return b.finish()
}

// kubeletTables are the built-in chains of the tables kube-proxy touches
// and what kubelet writes at startup, before kube-proxy (in every proxy
// mode): the hint, KUBE-FIREWALL (IPv4 only) and its canaries.
func kubeletTables(f rules.Family) *builder {
	b := &builder{family: f, tables: map[string]map[string]*rules.Chain{}}
	for _, t := range iptablesTableOrder {
		for _, name := range builtins[t] {
			c := b.chain(t, name)
			c.Hook = hookOf(name)
			c.Policy = "ACCEPT"
		}
	}
	b.chain("mangle", vocab.ChainIptablesHint)
	if f == rules.IPv4 {
		b.chain("filter", vocab.ChainFirewall)
		b.prepend("filter", "OUTPUT", jumpRule(jump{dst: vocab.ChainFirewall}))
		b.prepend("filter", "INPUT", jumpRule(jump{dst: vocab.ChainFirewall}))
		b.add("filter", vocab.ChainFirewall, rules.Rule{
			Text:    "! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment " + vocab.Quote(localnetComment) + " -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
			Comment: localnetComment,
		})
	}
	for _, t := range []string{"mangle", "nat", "filter"} {
		b.chain(t, vocab.ChainKubeletCanary)
	}
	return b
}

// nodePortsRule is the last rule of nat KUBE-SERVICES when NodePorts accept
// every local address (the default in iptables mode).
func nodePortsRule() rules.Rule {
	return rules.Rule{
		Text:    "-m comment --comment " + vocab.Quote(nodeportsComment) + " -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS",
		Comment: nodeportsComment,
		Jump:    vocab.ChainNodePorts,
	}
}

func hasRule(c *rules.Chain, text string) bool {
	for _, r := range c.Rules {
		if r.Text == text {
			return true
		}
	}
	return false
}

func hookOf(builtin string) string {
	switch builtin {
	case "PREROUTING":
		return "prerouting"
	case "INPUT":
		return "input"
	case "FORWARD":
		return "forward"
	case "OUTPUT":
		return "output"
	case "POSTROUTING":
		return "postrouting"
	}
	return ""
}

// finish orders each table: built-ins in hook order, then the rest by name.
func (b *builder) finish() []rules.Table {
	var out []rules.Table
	for _, tname := range iptablesTableOrder {
		chains := b.tables[tname]
		t := rules.Table{Family: b.family, Name: tname}
		for _, name := range builtins[tname] {
			t.Chains = append(t.Chains, *chains[name])
		}
		for _, name := range sortedKeys(chains) {
			if chains[name].Hook == "" {
				t.Chains = append(t.Chains, *chains[name])
			}
		}
		out = append(out, t)
	}
	return out
}
