package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// AfterIPVS is the sweep that ends a migration off ipvs mode: ipvs mode's
// own chains in both iptables backends (which iptables mode never rewrites
// and whose rules hold the sets), then SweepIPVS (virtual servers on
// kube-ipvs0, the link, the sets), then the sysctls it leaves, said.
type AfterIPVS struct {
	DryRun bool `json:"dry_run"`
	// Chains is one plan per iptables backend that had ipvs chains.
	Chains []*Plan   `json:"chains"`
	IPVS   IPVSSweep `json:"ipvs"`
	// Sysctls are the settings ipvs mode made that stay, one sentence each.
	Sysctls []string `json:"sysctls"`
	// Remaining is kube-proxy's ipvs state still there after the sweep.
	Remaining []string `json:"remaining,omitempty"`
}

// SweepAfterIPVS runs the sweep in the caller's network namespace (with
// dryRun, only says what it would remove). The error is set when something
// of kube-proxy's ipvs mode remains or a part could not be read: a
// migration must not end on a node that still answers ARP for Service IPs.
func SweepAfterIPVS(ctx context.Context, run Runner, dryRun bool) (AfterIPVS, error) {
	out := AfterIPVS{DryRun: dryRun}
	var errs []error
	for _, b := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		p, err := ipvsChains(ctx, run, b)
		switch {
		case hostfs.IsMissingTool(err):
			out.IPVS.Left = append(out.IPVS.Left, fmt.Sprintf("%s not read (%v): its ipvs chains, if any, are not removed", b, err))
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case p.Empty():
			continue
		}
		if dryRun {
			out.Chains = append(out.Chains, p)
			continue
		}
		if err := Apply(ctx, run, p); err != nil {
			errs = append(errs, err)
			continue
		}
		out.Chains = append(out.Chains, p)
	}
	sweep, err := SweepIPVS(dryRun)
	out.IPVS.DryRun, out.IPVS.Removals, out.IPVS.Failed = sweep.DryRun, sweep.Removals, sweep.Failed
	out.IPVS.Left = append(out.IPVS.Left, sweep.Left...)
	errs = append(errs, err)
	out.Sysctls = IPVSSysctls(hostfs.New("/"))
	if dryRun {
		return out, errors.Join(errs...)
	}
	l := ipvs.Classify(ipvs.ReadFootprint())
	for _, s := range append(l.Sets, l.ReferencedSets...) {
		out.Remaining = append(out.Remaining, "ipset "+s.Name)
	}
	if l.Link != nil {
		out.Remaining = append(out.Remaining, "link "+l.Link.Name)
	}
	for _, s := range l.Services {
		out.Remaining = append(out.Remaining, "IPVS virtual server "+s.String())
	}
	if len(out.Remaining) > 0 {
		errs = append(errs, fmt.Errorf("kube-proxy's ipvs state remains after the sweep: %s", strings.Join(out.Remaining, ", ")))
	}
	return out, errors.Join(errs...)
}

// ipvsChains plans the removal of ipvs mode's own chains (and the jumps to
// them) from backend b, leaving every chain iptables mode also writes:
// those are the live kube-proxy's when the migration stays on b.
func ipvsChains(ctx context.Context, run Runner, b backend.Backend) (*Plan, error) {
	live, err := Read(ctx, run, b)
	if err != nil {
		return nil, err
	}
	view := &rules.Ruleset{Backend: b}
	for _, t := range live.Tables {
		vt := t
		vt.Chains = nil
		for _, c := range t.Chains {
			if vocab.IsIPVSOnlyChain(c.Name) || !vocab.IsKubeProxyChain(c.Name) {
				vt.Chains = append(vt.Chains, c)
			}
		}
		view.Tables = append(view.Tables, vt)
	}
	return Compute(view), nil
}

// Text says what the sweep removed and what it leaves.
func (a AfterIPVS) Text() string {
	var b strings.Builder
	for _, p := range a.Chains {
		b.WriteString(Result{Plan: p, DryRun: a.DryRun}.Text())
	}
	b.WriteString(a.IPVS.Text())
	for _, s := range a.Sysctls {
		fmt.Fprintf(&b, "cleanup: left: %s\n", s)
	}
	return b.String()
}
