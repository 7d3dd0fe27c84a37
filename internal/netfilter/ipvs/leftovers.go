package ipvs

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Footprint is kube-proxy's ipvs state as read from one network namespace,
// with what could not be read. A read error leaves its part empty and is
// kept: callers say it was not read, they never take it for "none".
type Footprint struct {
	Sets    []ipset.Set
	NoIPSet bool // the kernel has no ip_set: no set can exist
	SetsErr error

	Link      Link
	LinkFound bool
	LinkErr   error

	Services    Services
	ServicesErr error

	// Conntrack is net.ipv4.vs.conntrack (ipvs mode sets 1: without it
	// the iptables rules never see IPVS's connections); ConntrackErr says
	// why it was not read (fs.ErrNotExist: no IPVS in the kernel).
	Conntrack    string
	ConntrackErr error
}

// ReadFootprint reads the ipsets, the kube-ipvs0 link and the virtual
// servers in the caller's network namespace.
func ReadFootprint() Footprint {
	var f Footprint
	f.Sets, f.SetsErr = ipset.List()
	if errors.Is(f.SetsErr, ipset.ErrNoIPSet) {
		f.Sets, f.SetsErr, f.NoIPSet = nil, nil, true
	}
	f.Link, f.LinkFound, f.LinkErr = ReadLink(vocab.IPVSDummyLink)
	f.Services, f.ServicesErr = ReadServices()
	f.Conntrack, f.ConntrackErr = readConntrack()
	return f
}

func readConntrack() (string, error) {
	b, err := hostfs.New("/").ReadFileMax(hostfs.IPVSConntrack, 64)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Leftovers splits a footprint into kube-proxy's objects a sweep may
// remove and what it must leave, each left object with its reason.
type Leftovers struct {
	// Sets are kube-proxy's ipvs sets that no rule references.
	Sets []ipset.Set
	// ReferencedSets are kube-proxy's sets a rule still uses (the ipvs
	// chains a switch stranded): the kernel refuses to destroy them.
	ReferencedSets []ipset.Set
	// Link is kube-ipvs0 when it is a dummy link, as kube-proxy makes it.
	Link *Link
	// Services are the virtual servers whose address is on kube-ipvs0.
	Services []Service
	// Left says, one sentence each, what stays and why.
	Left []string
}

// Empty reports whether nothing of kube-proxy's ipvs mode is left,
// referenced sets included.
func (l Leftovers) Empty() bool {
	return len(l.Sets) == 0 && len(l.ReferencedSets) == 0 && l.Link == nil && len(l.Services) == 0
}

// Classify finds kube-proxy's leftovers in f. Only kube-proxy's exact set
// names count (vocab.IsKubeProxyIPSet); kube-ipvs0 only as a dummy link;
// virtual servers only when their address is on that dummy link, since
// keepalived and others run IPVS on the same node and their servers are
// theirs.
func Classify(f Footprint) Leftovers {
	var l Leftovers
	for _, s := range f.Sets {
		switch {
		case !vocab.IsKubeProxyIPSet(s.Name):
			continue
		case s.References > 0:
			l.ReferencedSets = append(l.ReferencedSets, s)
			l.Left = append(l.Left, fmt.Sprintf("ipset %s stays: %d rule(s) still reference it (remove the stranded ipvs chains first)", s.Name, s.References))
		default:
			l.Sets = append(l.Sets, s)
		}
	}
	onLink := map[netip.Addr]bool{}
	if f.LinkFound {
		if f.Link.Kind == "dummy" {
			link := f.Link
			l.Link = &link
			for _, a := range f.Link.Addrs {
				onLink[a] = true
			}
		} else {
			kind := f.Link.Kind
			if kind == "" {
				kind = "no kind"
			}
			l.Left = append(l.Left, fmt.Sprintf("link %s stays: it is of kind %s, not the dummy link kube-proxy makes", f.Link.Name, kind))
		}
	}
	others := 0
	for _, s := range f.Services.List {
		if s.Addr.IsValid() && onLink[s.Addr] {
			l.Services = append(l.Services, s)
		} else {
			others++
		}
	}
	if others > 0 {
		l.Left = append(l.Left, fmt.Sprintf("%d IPVS virtual server(s) stay: their addresses are not on a dummy %s, so they are another owner's (keepalived, ...)", others, vocab.IPVSDummyLink))
	}
	return l
}
