package certify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
)

// ExitCode is certify's exit status for a verdict: 0 runnable, 1 not
// runnable, 2 cannot tell.
func ExitCode(r certified.Record) int {
	switch r.Verdict {
	case certified.Runnable:
		return 0
	case certified.NotRunnable:
		return 1
	}
	return 2
}

// Text is the verdict as an image pipeline's log shows it: the answer
// first, then each backend with what the image lacks and what to add,
// then the facts the answer rests on.
func Text(r certified.Record, recorded string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s (exit %d): %s\n", r.Verdict, ExitCode(r), r.Why)
	backend := r.Backend
	if backend == "" {
		backend = "none"
	}
	asked := r.Asked
	if r.AskedBy != "" {
		asked += " in " + r.AskedBy
	}
	fmt.Fprintf(&b, "first boot runs: %s (the image asks for %s)\n", backend, asked)
	b.WriteString("\nbackends:\n")
	for _, be := range r.Backends {
		state := "runnable"
		switch {
		case !be.Runnable:
			state = "not runnable"
		case !be.Confirmed:
			state = "not confirmed"
		}
		fmt.Fprintf(&b, "  %-16s %s\n", be.Name, state)
		for _, why := range be.Reasons {
			fmt.Fprintf(&b, "      %s\n", why)
		}
		for _, m := range be.Missing {
			fmt.Fprintf(&b, "      missing (%s): %s\n        add: %s\n", m.Kind, m.What, m.Add)
		}
	}
	b.WriteString("\nimage:\n")
	k := r.Kernel
	kernel := orUnknown(k.Release)
	if k.ReleaseSource != "" {
		kernel += " (" + k.ReleaseSource + ")"
	}
	if k.ConfigSource != "" {
		kernel += ", config " + k.ConfigSource
	}
	fmt.Fprintf(&b, "  kernel:    %s\n", kernel)
	fmt.Fprintf(&b, "  modules:   %d of the backends' netfilter modules\n", len(k.Modules))
	u := r.Userspace
	fmt.Fprintf(&b, "  iptables:  %s, version %s\n", orUnknown(u.Iptables), orUnknown(u.IptablesVersion))
	fmt.Fprintf(&b, "  nft:       version %s\n", orUnknown(u.NftVersion))
	if u.VersionSource != "" {
		fmt.Fprintf(&b, "  versions:  from %s\n", u.VersionSource)
	}
	d := r.Distribution
	dist := "not installed (no unit found)"
	if len(d.Units) > 0 {
		dist = strings.Join(d.Units, ", ") + ", version " + orUnknown(d.Version)
		if d.VersionSource != "" {
			dist += " (" + d.VersionSource + ")"
		}
	}
	fmt.Fprintf(&b, "  %-10s %s\n", strings.ToLower(d.Name)+":", dist)
	if len(r.Reasons) > 0 {
		b.WriteString("\nreasons for the first boot's backend:\n")
		for i, reason := range r.Reasons {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, reason)
		}
	}
	if len(r.Problems) > 0 {
		b.WriteString("\nnot known in an image, or missing:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	if recorded != "" {
		fmt.Fprintf(&b, "\nrecorded in %s\n", recorded)
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
