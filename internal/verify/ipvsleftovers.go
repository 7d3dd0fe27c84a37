package verify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Kinds of the leftover-ipvs findings: kube-proxy's ipvs state that
// survived a move off ipvs (on RKE2 its cleanup returns early when modprobe
// fails in the pod, DOMAIN.md 10).
const (
	KindIPVSLeftoverSets     = "ipvs-leftover-ipsets"
	KindIPVSLeftoverLink     = "ipvs-leftover-link"
	KindIPVSLeftoverServices = "ipvs-leftover-virtual-servers"
)

// ipvsSweepFix is the command that removes what these findings name.
const ipvsSweepFix = "rke2-proxy-backend cleanup --ipvs-leftovers --dry-run, then without --dry-run"

// IPVSLeftoverFindings judges a footprint read on a node whose kube-proxy
// is not in ipvs mode: each class of kube-proxy's ipvs objects still there
// is one finding naming them; read errors, and what is another owner's,
// are notes.
func IPVSLeftoverFindings(f ipvs.Footprint) (findings []Finding, notes []string) {
	l := ipvs.Classify(f)
	if sets := append(append([]ipset.Set(nil), l.Sets...), l.ReferencedSets...); len(sets) > 0 {
		var names []string
		for _, s := range sets {
			n := s.Name
			if s.References > 0 {
				n += fmt.Sprintf(" (referenced by %d rule(s): a stranded ipvs chain)", s.References)
			}
			names = append(names, n)
		}
		findings = append(findings, Finding{Kind: KindIPVSLeftoverSets,
			Message: fmt.Sprintf("kube-proxy's ipvs-mode ipsets are left on a node not in ipvs mode: %s", strings.Join(names, ", ")),
			Fix:     ipvsSweepFix})
	}
	if l.Link != nil {
		findings = append(findings, Finding{Kind: KindIPVSLeftoverLink,
			Message: fmt.Sprintf("kube-proxy's dummy link %s is left with %d address(es) on it: the node answers ARP for them (LoadBalancer IPs included)%s",
				l.Link.Name, len(l.Link.Addrs), addrList(l.Link)),
			Fix: ipvsSweepFix})
	}
	if len(l.Services) > 0 {
		var s []string
		for _, v := range l.Services {
			s = append(s, v.String())
		}
		findings = append(findings, Finding{Kind: KindIPVSLeftoverServices,
			Message: fmt.Sprintf("%d IPVS virtual server(s) on %s's addresses are left: %s", len(l.Services), vocab.IPVSDummyLink, clipList(s, 10)),
			Fix:     ipvsSweepFix})
	}
	for _, why := range l.Left {
		if !strings.HasPrefix(why, "ipset ") { // referenced sets are in the finding
			notes = append(notes, "ipvs leftovers: "+why)
		}
	}
	if f.SetsErr != nil {
		notes = append(notes, "ipvs leftovers: ipsets not read: "+f.SetsErr.Error())
	}
	if f.LinkErr != nil {
		notes = append(notes, fmt.Sprintf("ipvs leftovers: link %s not read: %v", vocab.IPVSDummyLink, f.LinkErr))
	}
	switch {
	case f.ServicesErr != nil:
		notes = append(notes, "ipvs leftovers: IPVS virtual servers not read: "+f.ServicesErr.Error())
	case !f.Services.Present:
		notes = append(notes, "ipvs leftovers: "+f.Services.Absent)
	}
	return findings, notes
}

func addrList(l *ipvs.Link) string {
	if len(l.Addrs) == 0 {
		return ""
	}
	s := make([]string, len(l.Addrs))
	for i, a := range l.Addrs {
		s[i] = a.String()
	}
	return ": " + clipList(s, 10)
}

// clipList joins at most n items and says how many more there are: a large
// cluster's kube-ipvs0 holds thousands.
func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// AddIPVSLeftovers reads the live ipvs footprint and adds the findings to
// res when kube-proxy is not in ipvs mode, then settles its verdict again.
// Not in ipvs mode means: a backend is expected, kube-proxy's /proxyMode
// (when asked) is not ipvs, and the plan (when there is one) records a
// managed mode other than ipvs; on an ipvs node this state is live.
// opts are the run's (ForHost's): opts.ProxyMode is the plan's mode, as
// Expect read it, and opts.IPVS reads the footprint (nil on a fixture
// root). Call it after Run.
func AddIPVSLeftovers(opts Options, res *Result) {
	if res == nil || opts.IPVS == nil || res.Expect == "" || res.ProxyMode == ProxyModeIPVS || opts.ProxyMode == ProxyModeIPVS {
		return
	}
	findings, notes := IPVSLeftoverFindings(opts.IPVS())
	for i := range findings {
		findings[i].Backend = res.Expect
	}
	res.Add(findings, nil, notes...)
}
