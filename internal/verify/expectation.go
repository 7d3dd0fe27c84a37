package verify

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// noPlanFix is what a node of distribution d without a usable plan needs
// to be verified.
func noPlanFix(d distro.Profile) string {
	return "let " + d.Name + " start once (its ExecStartPre runs rke2-proxy-backend apply, which records the plan), run rke2-proxy-backend apply, or pass --expect B"
}

// notAppliedFix is what a node whose plan was not applied needs.
func notAppliedFix(d distro.Profile) string {
	return "read apply's reason (the journal of the " + d.AnyUnit + ", and the plan's applied.nothing), fix it and " + d.Restart + " so apply gives it a backend; or pass --expect B to verify one anyway"
}

// Expect fills what verify checks against (opts.Expect and its source, the
// one-boot override, the Kubernetes version and the node's IP families)
// from the claim, else from what the plan says RKE2 was given this boot
// (plan.Applied, never a backend apply only meant). When nothing says
// which backend to expect, or the plan says apply gave RKE2 none, it
// returns the "cannot tell" result to report instead. A plan that turned
// the tool off leaves opts.Expect empty: there is nothing to verify. Errors
// are a bad claim (*FlagError) or a host verify cannot judge at all (a
// broken plan version, no /proc).
func Expect(root hostfs.Root, claim Claim, opts *Options) (*Result, error) {
	// The plan is read even under a full claim: its proxy mode says how
	// kube-proxy programs the backend (ipvs or the backend's own mode).
	// Without a backend of ours applied only RKE2's own ipvs still holds.
	p, planErr := plan.Read(root)
	d := opts.Distribution.Profile()
	applied := p.AppliedBackend()
	switch {
	case planErr != nil:
	case applied != "":
		opts.ProxyMode = p.Applied.ProxyMode
	case p.Decision.ProxyMode == ProxyModeIPVS:
		opts.ProxyMode = ProxyModeIPVS
	}
	switch {
	case claim.Backend != "":
		b, err := backend.Parse(claim.Backend)
		if err != nil {
			return nil, &FlagError{Flag: "--expect", Err: err}
		}
		opts.Expect, opts.ExpectSource = b, "--expect"
	case planErr != nil && errors.Is(planErr, fs.ErrNotExist):
		return CannotTell(fmt.Sprintf("no plan at %s (apply has not run since boot) and no --expect: nothing says which backend to verify", hostfs.PlanFile), noPlanFix(d)), nil
	case planErr != nil:
		return CannotTell(fmt.Sprintf("the plan cannot be read, so nothing says which backend to verify: %v", planErr), noPlanFix(d)), nil
	case applied == "" && p.Decision.Disabled:
		return nil, nil
	case applied == "":
		return CannotTell(fmt.Sprintf("not applied: plan %s says apply gave %s no backend this boot (%s), so nothing says which backend kube-proxy runs", hostfs.PlanFile, d.Name, p.Applied.Nothing), notAppliedFix(d)), nil
	default:
		if _, err := backend.Parse(string(applied)); err != nil {
			return CannotTell(fmt.Sprintf("plan %s: applied.backend: %v", hostfs.PlanFile, err), noPlanFix(d)), nil
		}
		opts.Expect, opts.ExpectSource = applied, hostfs.PlanFile
		opts.OneBootOverride = p.Carried() && p.Decision.Source == config.SourceCmdline
	}
	if opts.ProxyMode == ProxyModeIPVS && !opts.Expect.UsesIptables() {
		return CannotTell(fmt.Sprintf("plan %s keeps kube-proxy in ipvs mode, which programs iptables, but the backend to verify is %s", hostfs.PlanFile, opts.Expect),
			"pass --expect iptables-legacy or --expect iptables-nft (the backend under ipvs), or run rke2-proxy-backend apply"), nil
	}
	kube := claim.Kubernetes
	if kube == "" && planErr == nil {
		kube = p.Kubernetes
	}
	if kube != "" {
		v, err := rke2.ParseVersion(kube)
		if err != nil {
			if claim.Kubernetes != "" {
				return nil, &FlagError{Flag: "--kubernetes", Err: err}
			}
			return nil, fmt.Errorf("plan %s: kubernetes: %w", hostfs.PlanFile, err)
		}
		opts.Kubernetes = v
	}
	opts.HostIptables = facts.IptablesAlternative(root)
	// kube-proxy runs single-stack where the node has no usable IPv6.
	var err error
	opts.Families, opts.SingleStackReason, err = facts.IPFamilies(root)
	return nil, err
}
