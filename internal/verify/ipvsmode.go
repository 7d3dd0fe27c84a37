package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Kinds of the ipvs-mode findings: what kube-proxy's ipvs mode keeps
// outside the iptables rules is missing or wrong. Its chains are judged
// with every other mode's (missing-chain, missing-jump, stranded-rules).
const (
	KindIPVSMissingSets     = "ipvs-missing-ipsets"
	KindIPVSMissingLink     = "ipvs-missing-link"
	KindIPVSMissingServices = "ipvs-missing-virtual-servers"
	KindIPVSSysctl          = "ipvs-sysctl"
)

// addIPVSMode judges the ipvs state that is no rule on a node in ipvs
// mode; what it cannot read is a note naming what was not checked.
func addIPVSMode(opts Options, res *Result) {
	if opts.IPVS == nil {
		res.Notes = append(res.Notes, "ipvs mode: ipsets, "+vocab.IPVSDummyLink+", IPVS virtual servers and net.ipv4.vs.conntrack not checked (not the running host's root)")
		return
	}
	findings, notes := newGroup(opts).ipvsModeFindings(opts.IPVS(), opts.Families)
	for i := range findings {
		findings[i].Backend = opts.Expect
	}
	res.Findings = append(res.Findings, findings...)
	res.Notes = append(res.Notes, notes...)
}

// ipvsModeFindings judges footprint f of a node whose kube-proxy runs in
// ipvs mode for families (empty: both): every KUBE-* ipset of ipvs mode
// exists, kube-ipvs0 is a dummy link, each address on it has a virtual
// server, and net.ipv4.vs.conntrack is 1. A part that could not be read,
// or that the kernel lacks (IPVS absent), is a note, not a finding.
func (g group) ipvsModeFindings(f ipvs.Footprint, families []rules.Family) (findings []Finding, notes []string) {
	if len(families) == 0 {
		families = []rules.Family{rules.IPv4, rules.IPv6}
	}
	switch {
	case f.NoIPSet:
		findings = append(findings, Finding{Kind: KindIPVSMissingSets,
			Message: "the kernel has no ip_set, so kube-proxy's ipvs mode cannot keep its KUBE-* ipsets",
			Fix:     "load ip_set (modprobe ip_set; rke2-proxy-backend apply preloads it on ipvs nodes), then restart " + g.kind.Name()})
	case f.SetsErr != nil:
		notes = append(notes, "ipvs mode: ipsets not checked: "+f.SetsErr.Error())
	default:
		have := map[string]bool{}
		for _, s := range f.Sets {
			have[s.Name] = true
		}
		for _, fam := range families {
			var missing []string
			for _, name := range expected.IPVSSets(fam) {
				if !have[name] {
					missing = append(missing, name)
				}
			}
			if len(missing) > 0 {
				findings = append(findings, Finding{Kind: KindIPVSMissingSets, Family: fam,
					Message: fmt.Sprintf("%s: kube-proxy's ipvs mode lacks %d ipset(s): %s", fam, len(missing), list(missing)),
					Fix:     g.restartKubeProxy()})
			}
		}
	}
	var onLink []netip.Addr
	switch {
	case f.LinkErr != nil:
		notes = append(notes, fmt.Sprintf("ipvs mode: link %s not checked: %v", vocab.IPVSDummyLink, f.LinkErr))
	case !f.LinkFound:
		findings = append(findings, Finding{Kind: KindIPVSMissingLink,
			Message: fmt.Sprintf("kube-proxy's dummy link %s is absent: ipvs mode binds every Service IP to it, so the node does not accept traffic for them", vocab.IPVSDummyLink),
			Fix:     "load dummy (modprobe dummy), then " + g.restartKubeProxy()})
	case f.Link.Kind != "dummy":
		findings = append(findings, Finding{Kind: KindIPVSMissingLink,
			Message: fmt.Sprintf("link %s is of kind %q, not the dummy link kube-proxy's ipvs mode makes", vocab.IPVSDummyLink, f.Link.Kind),
			Fix:     fmt.Sprintf("find what made %s (ip -d link show %s); remove it and %s", vocab.IPVSDummyLink, vocab.IPVSDummyLink, g.restartKubeProxy())})
	default:
		onLink = f.Link.Addrs
	}
	if f.SetsErr == nil && !f.NoIPSet && onLink != nil {
		findings = append(findings, g.boundSetFindings(f, onLink, families)...)
	}
	switch {
	case f.ServicesErr != nil:
		notes = append(notes, "ipvs mode: IPVS virtual servers not checked: "+f.ServicesErr.Error())
	case !f.Services.Present:
		notes = append(notes, "ipvs mode: IPVS virtual servers not checked: "+f.Services.Absent)
	default:
		var bare []string
		for _, a := range onLink {
			if !slices.ContainsFunc(f.Services.List, func(s ipvs.Service) bool { return s.Addr == a }) {
				bare = append(bare, a.String())
			}
		}
		if len(bare) > 0 {
			findings = append(findings, Finding{Kind: KindIPVSMissingServices,
				Message: fmt.Sprintf("%d address(es) on %s have no IPVS virtual server, so their Services do not answer: %s", len(bare), vocab.IPVSDummyLink, clipList(bare, 10)),
				Fix:     g.restartKubeProxy()})
		}
	}
	switch {
	case errors.Is(f.ConntrackErr, fs.ErrNotExist) && !f.Services.Present && f.Services.Absent != "":
		notes = append(notes, "ipvs mode: net.ipv4.vs.conntrack not checked (no /proc/sys/net/ipv4/vs): "+f.Services.Absent)
	case errors.Is(f.ConntrackErr, fs.ErrNotExist):
		notes = append(notes, "ipvs mode: net.ipv4.vs.conntrack not checked: IPVS is not loaded (no /proc/sys/net/ipv4/vs)")
	case f.ConntrackErr != nil:
		notes = append(notes, "ipvs mode: net.ipv4.vs.conntrack not checked: "+f.ConntrackErr.Error())
	case f.Conntrack != "1":
		findings = append(findings, Finding{Kind: KindIPVSSysctl,
			Message: fmt.Sprintf("net.ipv4.vs.conntrack is %s, not 1: the iptables rules of ipvs mode do not see IPVS's connections (masquerade and NodePorts break)", f.Conntrack),
			Fix:     "find what resets it (grep -r net.ipv4.vs.conntrack /etc/sysctl.d /etc/sysctl.conf) and remove that; kube-proxy sets it to 1 when it starts: " + g.restartKubeProxy()})
	}
	return findings, notes
}

// ipvsBoundSet is the set kube-proxy fills with exactly the addresses it
// binds to kube-ipvs0 (its activeBindAddrs), one per family.
const ipvsBoundSet = "KUBE-IPVS-IPS"

// boundSetFindings compares, per family, the members of KUBE-IPVS-IPS
// (counted from the set's header) with the addresses on kube-ipvs0:
// kube-proxy writes both from the same list, so a difference means one
// of them was changed behind its back (its REJECT of other traffic to
// Service IPs then misses addresses or blocks wrong ones).
func (g group) boundSetFindings(f ipvs.Footprint, onLink []netip.Addr, families []rules.Family) []Finding {
	var out []Finding
	for _, fam := range families {
		name := ipvsBoundSet
		if fam == rules.IPv6 {
			name = vocab.IPv6IPSetName(name)
		}
		i := slices.IndexFunc(f.Sets, func(s ipset.Set) bool { return s.Name == name })
		if i < 0 {
			continue // missing: the missing-sets finding names it
		}
		bound := 0
		for _, a := range onLink {
			if a.Is4() == (fam == rules.IPv4) && !a.IsLinkLocalUnicast() {
				bound++
			}
		}
		if int(f.Sets[i].Entries) != bound {
			out = append(out, Finding{Kind: KindIPVSMissingSets, Family: fam,
				Message: fmt.Sprintf("%s: ipset %s holds %d address(es), but %d %s address(es) are on %s: kube-proxy keeps them equal", fam, name, f.Sets[i].Entries, bound, fam, vocab.IPVSDummyLink),
				Fix:     g.restartKubeProxy()})
		}
	}
	return out
}
