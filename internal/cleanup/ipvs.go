package cleanup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"golang.org/x/sys/unix"
)

// IPVSSweep is what one sweep of kube-proxy's ipvs leftovers did (or, in
// a dry run, would do): it removes only kube-proxy's objects
// (ipvs.Classify), one netlink write each, and says why it leaves the rest.
type IPVSSweep struct {
	DryRun bool `json:"dry_run"`
	// Removals lists each object removed, in the order they go: virtual
	// servers, then the link (its addresses go with it), then the sets.
	Removals []string `json:"removals"`
	// Left says what stays and why, one sentence each.
	Left []string `json:"left"`
	// Failed lists the removals the kernel refused, with its answer.
	Failed []string `json:"failed,omitempty"`
}

// removal is one object to remove and the write that removes it.
type removal struct {
	what string
	do   func() error
}

// ipvsRemovals orders the writes: servers first (they are reached through
// kube-ipvs0's addresses), then the link, then the sets no rule uses.
func ipvsRemovals(l ipvs.Leftovers) []removal {
	var out []removal
	for _, s := range l.Services {
		s := s
		out = append(out, removal{"IPVS virtual server " + s.String(), func() error { return ipvs.DeleteService(s) }})
	}
	if l.Link != nil {
		link := *l.Link
		out = append(out, removal{fmt.Sprintf("link %s (dummy, %d address(es))", link.Name, len(link.Addrs)), func() error { return ipvs.DeleteLink(link) }})
	}
	for _, s := range l.Sets {
		name := s.Name
		out = append(out, removal{fmt.Sprintf("ipset %s (%s, %d entries)", name, s.Type, s.Entries), func() error {
			err := ipset.Destroy(name)
			if errors.Is(err, unix.ENOENT) {
				return nil // gone since the read: what the sweep wanted
			}
			return err
		}})
	}
	return out
}

// SweepIPVS reads the ipvs footprint in the caller's network namespace
// and removes kube-proxy's leftovers, or with dryRun only says what it
// would remove. The error is set when a part could not be read or a
// removal failed; the sweep still does what it can.
func SweepIPVS(dryRun bool) (IPVSSweep, error) {
	f := ipvs.ReadFootprint()
	l := ipvs.Classify(f)
	s := IPVSSweep{DryRun: dryRun, Removals: []string{}, Left: append([]string{}, l.Left...)}
	var errs []error
	if f.SetsErr != nil {
		s.Left = append(s.Left, "ipsets not read, none removed: "+f.SetsErr.Error())
		errs = append(errs, f.SetsErr)
	}
	if f.LinkErr != nil {
		s.Left = append(s.Left, "link not read, not removed: "+f.LinkErr.Error())
		errs = append(errs, f.LinkErr)
	}
	switch {
	case f.ServicesErr != nil:
		s.Left = append(s.Left, "IPVS virtual servers not read, none removed: "+f.ServicesErr.Error())
		errs = append(errs, f.ServicesErr)
	case !f.Services.Present:
		s.Left = append(s.Left, f.Services.Absent+": no virtual server to remove")
	}
	for _, r := range ipvsRemovals(l) {
		if dryRun {
			s.Removals = append(s.Removals, r.what)
			continue
		}
		if err := r.do(); err != nil {
			s.Failed = append(s.Failed, fmt.Sprintf("%s: %v", r.what, err))
			errs = append(errs, err)
			continue
		}
		s.Removals = append(s.Removals, r.what)
	}
	return s, errors.Join(errs...)
}

// Text is one line saying what went (or would go), then one per object,
// then what stays.
func (s IPVSSweep) Text() string {
	var b strings.Builder
	if len(s.Removals) == 0 && len(s.Failed) == 0 {
		b.WriteString("cleanup: no kube-proxy ipvs leftovers; nothing to remove\n")
	} else {
		WriteRemovals(&b, s.DryRun, "kube-proxy ipvs leftover(s)", s.Removals)
	}
	for _, f := range s.Failed {
		fmt.Fprintf(&b, "cleanup: failed: %s\n", f)
	}
	for _, l := range s.Left {
		fmt.Fprintf(&b, "cleanup: left: %s\n", l)
	}
	return b.String()
}
