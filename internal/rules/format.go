package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// The canonical text of a Ruleset is sorted, counter-free and loadable:
//
//	# backend iptables-legacy
//	# family ipv4
//	*filter
//	:INPUT ACCEPT [0:0]
//	:KUBE-FIREWALL - [0:0]
//	-A INPUT -j KUBE-FIREWALL
//	COMMIT
//	# family ipv6
//	...
//
// For the iptables backends each family section is iptables-restore input
// (SplitFamilies cuts it for iptables-restore / ip6tables-restore). The
// "[0:0]" after each chain is not a counter reading: iptables-restore needs
// the field, and iptables-save prints it exactly so when nothing matched.
// For nftables each family section is `nft -f` input in the order
// knftables.Fake.Dump uses: tables, chains, sets and maps, named counters,
// rules, elements, so every reference exists before it is used.
//
// Tables are sorted by name, chains by name (iptables built-in chains first,
// in hook order, as iptables-save prints them), sets and elements by text.
// Rules keep their kernel order within a chain: rule order is semantic.

// familyHeader starts one family's section in the canonical text.
const familyHeader = "# family "

// Format returns the canonical text of rs, both families.
func Format(rs *Ruleset) string {
	var b strings.Builder
	b.WriteString("# backend " + string(rs.Backend) + "\n")
	for _, fam := range []Family{IPv4, IPv6} {
		if !hasFamily(rs, fam) {
			continue
		}
		b.WriteString(familyHeader + string(fam) + "\n")
		b.WriteString(FormatFamily(rs, fam))
	}
	return b.String()
}

// FormatFamily returns the loadable text of one family's tables, without
// headers: feed it to iptables-restore, ip6tables-restore or nft -f.
func FormatFamily(rs *Ruleset, fam Family) string {
	sorted := Normalize(rs)
	var tables []Table
	for _, t := range sorted.Tables {
		if t.Family == fam {
			tables = append(tables, t)
		}
	}
	if rs.Backend == backend.NFTables {
		return formatNFT(tables)
	}
	var b strings.Builder
	for _, t := range tables {
		formatIptablesTable(&b, t)
	}
	return b.String()
}

func hasFamily(rs *Ruleset, fam Family) bool {
	return slices.ContainsFunc(rs.Tables, func(t Table) bool { return t.Family == fam })
}

func formatIptablesTable(b *strings.Builder, t Table) {
	b.WriteString("*" + t.Name + "\n")
	for _, c := range t.Chains {
		policy := "-"
		if IsBuiltinChain(t.Name, c.Name) {
			policy = c.Policy
			if policy == "" {
				policy = "ACCEPT"
			}
		}
		fmt.Fprintf(b, ":%s %s [0:0]\n", c.Name, policy)
	}
	for _, c := range t.Chains {
		for _, r := range c.Rules {
			b.WriteString("-A " + c.Name)
			if text := r.Shown(); text != "" {
				b.WriteString(" " + text)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("COMMIT\n")
}

// NFTFamily is the nft family keyword of a table family.
func NFTFamily(f Family) string {
	switch f {
	case IPv4:
		return "ip"
	case IPv6:
		return "ip6"
	}
	return string(f)
}

func formatNFT(tables []Table) string {
	var b strings.Builder
	for _, t := range tables {
		prefix := NFTFamily(t.Family) + " " + t.Name
		if t.Comment != "" {
			fmt.Fprintf(&b, "add table %s { comment %s ; }\n", prefix, QuoteNFT(t.Comment))
		} else {
			fmt.Fprintf(&b, "add table %s\n", prefix)
		}
		for _, c := range t.Chains {
			b.WriteString("add chain " + prefix + " " + c.Name + chainSpec(c) + "\n")
		}
		for _, s := range t.Sets {
			b.WriteString(setDecl(prefix, s) + "\n")
		}
		// Named counters before the rules that count in them.
		for _, name := range t.Counters {
			b.WriteString("add counter " + prefix + " " + name + "\n")
		}
		for _, c := range t.Chains {
			for _, r := range c.Rules {
				b.WriteString("add rule " + prefix + " " + c.Name + " " + r.Text + "\n")
			}
		}
		for _, s := range t.Sets {
			for _, e := range s.ShownElements() {
				fmt.Fprintf(&b, "add element %s %s { %s }\n", prefix, s.Name, e)
			}
		}
	}
	return b.String()
}

func chainSpec(c Chain) string {
	var parts []string
	if c.Hook != "" {
		parts = append(parts, fmt.Sprintf("type %s hook %s priority %d", c.Type, c.Hook, c.Priority))
		if c.Policy != "" {
			parts = append(parts, "policy "+c.Policy)
		}
	}
	if c.Comment != "" {
		parts = append(parts, "comment "+QuoteNFT(c.Comment))
	}
	if len(parts) == 0 {
		return ""
	}
	return " { " + strings.Join(parts, " ; ") + " ; }"
}

func setDecl(prefix string, s Set) string {
	kind := "set"
	if s.Map {
		kind = "map"
	}
	parts := []string{"type " + s.Type}
	if len(s.Flags) > 0 {
		parts = append(parts, "flags "+strings.Join(s.Flags, ","))
	}
	if s.Timeout != "" {
		parts = append(parts, "timeout "+s.Timeout)
	}
	if s.Size != 0 {
		parts = append(parts, fmt.Sprintf("size %d", s.Size))
	}
	if s.Comment != "" {
		parts = append(parts, "comment "+QuoteNFT(s.Comment))
	}
	return fmt.Sprintf("add %s %s %s { %s ; }", kind, prefix, s.Name, strings.Join(parts, " ; "))
}

// QuoteNFT quotes an nft string the way this model's text and the nft
// text decoder both write it. nft has no escape for '"', so one inside a
// comment cannot be represented; it is replaced by a single quote rather
// than producing text that does not load.
func QuoteNFT(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}

// SplitFamilies cuts canonical text into its family sections, each ready
// for iptables-restore, ip6tables-restore or nft -f.
func SplitFamilies(text string) (map[Family]string, error) {
	parts := map[Family]*strings.Builder{}
	var cur Family
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, familyHeader); ok {
			cur = Family(strings.TrimSpace(rest))
			if cur != IPv4 && cur != IPv6 {
				return nil, fmt.Errorf("canonical text: unknown family %q in %q", cur, strings.TrimSpace(line))
			}
			if parts[cur] == nil {
				parts[cur] = &strings.Builder{}
			}
			continue
		}
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if cur == "" {
			return nil, fmt.Errorf("canonical text: line %q comes before any %q header", strings.TrimSpace(line), familyHeader+"...")
		}
		parts[cur].WriteString(line)
	}
	out := make(map[Family]string, len(parts))
	for f, b := range parts {
		out[f] = b.String()
	}
	return out, nil
}
