// Package rules is the built-in rule renderer: a model of netfilter state
// shared by the readers and the expected kube-proxy footprint, its canonical
// text, and the diff between expected and live.
package rules

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Family is an IP family.
type Family string

const (
	IPv4 Family = "ipv4"
	IPv6 Family = "ipv6"
)

// Ruleset is one backend's state (or its expected state).
type Ruleset struct {
	Backend backend.Backend `json:"backend"`
	Tables  []Table         `json:"tables"`
}

// Table is an iptables table (filter, nat, mangle, raw, security) of one
// family, or an nftables table (family ip/ip6/inet, e.g. "kube-proxy").
type Table struct {
	Family  Family  `json:"family"`
	Name    string  `json:"name"`
	Comment string  `json:"comment,omitempty"`
	Chains  []Chain `json:"chains"`
	Sets    []Set   `json:"sets,omitempty"` // nftables sets and maps
	// Counters are the table's named nftables counters (kube-proxy 1.38
	// counts rejected localhost NodePort packets in them), by name only:
	// their packet and byte counts are state, like rule counters.
	Counters []string `json:"counters,omitempty"`
}

// Chain is a chain with its rules. Base chains have Hook set (and Type and
// Priority for nftables; Policy for iptables built-ins).
type Chain struct {
	Name     string `json:"name"`
	Hook     string `json:"hook,omitempty"`
	Type     string `json:"type,omitempty"`
	Priority int    `json:"priority,omitempty"`
	Policy   string `json:"policy,omitempty"`
	// Comment is an nftables chain comment (iptables chains have none).
	Comment string `json:"comment,omitempty"`
	Rules   []Rule `json:"rules"`
}

// Rule is one rule in canonical, counter-free text (iptables-save argument
// form without "-A CHAIN" for the iptables backends, nft statement syntax for
// nftables), plus what verify needs without parsing Text again.
type Rule struct {
	Text    string `json:"text"`
	Comment string `json:"comment,omitempty"`
	// Jump is the target chain of a jump or goto ("" for other verdicts).
	Jump string `json:"jump,omitempty"`
	// NotRead says a shallow read counted this rule without reading it:
	// Text is empty and only Jump and Comment are known (or nothing, in a
	// chain the reader was told to skip). See netfilter.System.Shallow.
	NotRead bool `json:"notRead,omitempty"`
}

// notReadText is how a rule not read shows in text forms: not valid
// iptables-restore syntax, so loading such a render fails loudly.
const notReadText = "UNSUPPORTED[rule not read]"

// Shown is the rule's text as Format and Diff print it: its Text, or a
// marker for a rule a shallow read did not read.
func (r Rule) Shown() string {
	if r.NotRead {
		return notReadText
	}
	return r.Text
}

// Set is an nftables set or map, in nft syntax. Type is the key type
// ("ipv4_addr . inet_proto . inet_service"); for a map it is "KEY : DATA"
// exactly as nft declares it ("... : verdict"). Elements are nft element
// text ("172.30.0.41", "tcp . 3001 comment \"ns2/svc2:p80\" : drop").
type Set struct {
	Name     string   `json:"name"`
	Map      bool     `json:"map,omitempty"`
	Type     string   `json:"type"`
	Flags    []string `json:"flags,omitempty"`
	Timeout  string   `json:"timeout,omitempty"` // nft duration, e.g. "10800s"
	Size     uint32   `json:"size,omitempty"`
	Comment  string   `json:"comment,omitempty"`
	Elements []string `json:"elements,omitempty"`
	// NotRead says a shallow read named the set without reading its
	// elements: Elements is empty whatever the kernel holds. See
	// netfilter.ReadOptions.Shallow.
	NotRead bool `json:"notRead,omitempty"`
	// Jumps are, for a verdict map a shallow read did not read but for
	// where its elements lead (netfilter.ReadOptions.ReadJumps), the
	// chains they jump or go to, sorted, each once.
	Jumps []string `json:"jumps,omitempty"`
}

// elementsNotReadText is how a set not read shows its elements in text
// forms: not valid nft syntax, so loading such a render fails loudly.
const elementsNotReadText = "UNSUPPORTED[elements not read]"

// ShownElements are the set's elements as Format and Diff print them:
// its Elements, or a marker for a set a shallow read did not read.
func (s Set) ShownElements() []string {
	if s.NotRead {
		return []string{elementsNotReadText}
	}
	return s.Elements
}

// Unsupported marks what a reader cannot decode. The marker is not valid
// nft or iptables-restore syntax, so loading a render that holds one fails
// loudly instead of silently loading something else.
func Unsupported(format string, args ...any) string {
	return "UNSUPPORTED[" + fmt.Sprintf(format, args...) + "]"
}
