// Package verify judges, after RKE2 starts, whether kube-proxy programmed
// the expected backend completely and left no rules stranded in another
// backend. ForHost reads a host for one run (the plan, RKE2's config, the
// CNI), the same for the verify, watch and switch commands; Run judges it
// into a Result. Proving a host (internal/prove) and saying what it
// proved (internal/proof) are the packages above.
package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/sleep"
)

// DefaultPoll is how often verify looks at the expected backend's change
// stamp (a few syscalls) while it waits for kube-proxy's first sync.
const DefaultPoll = 2 * time.Second

// KindNoPlan is the finding when nothing says which backend to expect.
const KindNoPlan = "no-plan"

// CannotTell is the result when nothing says which backend to expect:
// verify cannot tell whether kube-proxy is right, which is neither a pass
// nor a failure.
func CannotTell(reason, fix string) *Result {
	r := &Result{Backends: []BackendState{}, Findings: []Finding{{Kind: KindNoPlan, Message: reason, Fix: fix}}}
	r.settle()
	return r
}

// Add appends what a check run after Run found (the runner's add-ons,
// internal/prove) and settles the verdict again.
func (r *Result) Add(findings, warnings []Finding, notes ...string) {
	r.Findings = append(r.Findings, findings...)
	r.Warnings = append(r.Warnings, warnings...)
	r.Notes = append(r.Notes, notes...)
	r.settle()
}

// settle derives OK and Verdict from the findings: any finding verify can
// name fails; only findings that say it could not look make it unknown.
func (r *Result) settle() {
	r.Verdict = VerdictOK
	for _, f := range r.Findings {
		switch f.Kind {
		case KindReadError, KindNoPlan:
			if r.Verdict == VerdictOK {
				r.Verdict = VerdictUnknown
			}
		default:
			r.Verdict = VerdictFailed
		}
	}
	r.OK = r.Verdict == VerdictOK
}

// oneBootHints turns hint findings into warnings for a one-boot override:
// the host's iptables alternative, which decides where kubelet writes its
// hints, is meant to stay as it is, and RKE2's kube-proxy image follows
// IPTABLES_MODE, not the hints. Only kube-proxy images that pick their
// backend from kubelet's hints (upstream iptables-wrappers) would be
// misled, so the override is worth knowing about, not failing.
func oneBootHints(hints []Finding) []Finding {
	for i := range hints {
		hints[i].Message += " (expected during a one-boot override from the kernel command line; not a failure)"
		hints[i].Fix = "nothing while the override lasts; to make it permanent, set backend: in /etc/rke2-proxy-backend/config.yaml and " + hints[i].Fix
	}
	return hints
}

// Run waits for kube-proxy's first sync in the expected backend (up to
// opts.Wait), then checks every backend and kube-proxy's proxy mode.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if _, err := backend.Parse(string(opts.Expect)); err != nil {
		return nil, fmt.Errorf("expected backend: %w", err)
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = DefaultProgressEvery
	}
	if opts.Sleep == nil {
		opts.Sleep = SleepCtx
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	judge, err := newJudge(opts)
	if err != nil {
		return nil, err
	}
	start := opts.Now()
	deadline := start.Add(opts.Wait)
	res := &Result{Expect: opts.Expect, ExpectSource: opts.ExpectSource, Mode: wantMode(opts), Findings: []Finding{},
		distribution: opts.Distribution, units: opts.Units}
	if opts.Kubernetes.Known() {
		res.Kubernetes = fmt.Sprintf("v%d.%d", opts.Kubernetes.Major, opts.Kubernetes.Minor)
	}
	w, err := waitForSync(ctx, opts, judge, deadline)
	if err != nil {
		return nil, err
	}
	res.Synced = w.synced
	live, missing, err := w.live, w.missing, w.err
	exp := BackendState{Backend: opts.Expect, Expected: true, Live: live}
	if err != nil {
		exp.ReadError = err.Error()
		res.Findings = append(res.Findings, Finding{Kind: KindReadError, Backend: opts.Expect,
			Message: fmt.Sprintf("cannot read %s: %v", opts.Expect, err),
			Fix:     "run as root on the node; check that the " + string(opts.Expect) + " tools and kernel support are present (rke2-proxy-backend detect)"})
	} else {
		exp.Complete = len(missing) == 0
		res.Findings = append(res.Findings, missing...)
		// Judged once kube-proxy's sync ended the wait, not waited for:
		// kube-proxy writes a Service's elements and chains in one
		// transaction, so a lost element stays lost until its next full
		// resync.
		res.Findings = append(res.Findings, judge.g.undispatched(live)...)
		if w.note != "" {
			res.Notes = append(res.Notes, w.note)
		}
		res.Notes = noteNotLoaded(res.Notes, opts.Reader, opts.Expect, live)
		switch {
		case w.cutShort:
			res.Notes = append(res.Notes, fmt.Sprintf("stopped waiting for kube-proxy's first sync in %s %s early: one more read of it would not have ended within --wait %s",
				opts.Expect, deadline.Sub(opts.Now()).Round(time.Second), opts.Wait))
		case !res.Synced && opts.Wait > 0:
			res.Notes = append(res.Notes, fmt.Sprintf("waited %s for kube-proxy's first sync in %s", opts.Wait, opts.Expect))
		}
	}
	native := cniNativeTables(ctx, opts, res)
	g := newGroup(opts)
	g.fillOwned(&exp, live)
	g.fillCNI(&exp, live, native)
	res.Findings = append(res.Findings, g.cniFindings(opts.CNI, &exp)...)
	res.Backends = append(res.Backends, exp)
	for _, b := range backend.All {
		if b == opts.Expect {
			continue
		}
		st := BackendState{Backend: b}
		rs, err := opts.Reader.Read(ctx, b)
		if err != nil {
			// A backend the kernel cannot run holds no rules; say so, do not fail.
			st.ReadError = err.Error()
			res.Notes = append(res.Notes, fmt.Sprintf("could not read %s (not checked for stranded rules): %v", b, err))
			res.Backends = append(res.Backends, st)
			continue
		}
		res.Notes = noteNotLoaded(res.Notes, opts.Reader, b, rs)
		g.fillOwned(&st, rs)
		g.fillCNI(&st, rs, native)
		res.Findings = append(res.Findings, g.strandedFindings(st)...)
		res.Findings = append(res.Findings, g.cniFindings(opts.CNI, &st)...)
		res.Backends = append(res.Backends, st)
	}
	// Kubelet's hint counts against kube-proxy's backend, wherever it is.
	hints := g.hintFindings(res.Backends, opts.HostIptables)
	if opts.OneBootOverride {
		res.Warnings = append(res.Warnings, oneBootHints(hints)...)
	} else {
		res.Findings = append(res.Findings, hints...)
	}
	if opts.ProxyModeURL == "" && opts.ProxyModeSource != "" {
		res.Notes = append(res.Notes, "proxy mode not checked: "+opts.ProxyModeSource)
	}
	if opts.ProxyModeURL != "" {
		pm := checkProxyMode(ctx, opts, deadline, res.Synced)
		res.ProxyMode = pm.mode
		switch {
		case pm.note != "":
			res.Notes = append(res.Notes, pm.note)
		case pm.problem != "":
			res.Findings = append(res.Findings, Finding{Kind: KindProxyMode, Backend: opts.Expect,
				Message: pm.problem,
				Fix:     "check what listens on " + opts.ProxyModeURL + " (ss -ltnp); it should be kube-proxy's metrics server, which binds there as kube-proxy-arg metrics-bind-address in " + opts.Distribution.Name() + "'s config says (127.0.0.1:10249 by default)"})
		case pm.mode != wantMode(opts):
			res.Findings = append(res.Findings, Finding{Kind: KindProxyMode, Backend: opts.Expect,
				Message: fmt.Sprintf("kube-proxy reports proxy mode %q, the plan wants %q", pm.mode, wantMode(opts)),
				Fix:     fmt.Sprintf("restart %s so kube-proxy reads %s: %s", opts.Distribution.Name(), rke2.DropInPath(opts.Distribution.ConfigFile()), g.restart())})
		}
		if pm.mode != "" {
			kubeProxySignals(ctx, opts, deadline, res)
		}
	}
	if opts.ProxyMode == ProxyModeIPVS {
		addIPVSMode(opts, res)
	}
	res.settle()
	res.Duration = opts.Now().Sub(start)
	return res, nil
}

// wantMode is the proxy mode kube-proxy must report: the plan's ipvs, or
// the expected backend's own mode.
func wantMode(opts Options) string {
	if opts.ProxyMode == ProxyModeIPVS {
		return ProxyModeIPVS
	}
	return opts.Expect.ProxyMode()
}

// fillOwned records kube-proxy's objects in the expected backend and, in
// any other, the group's objects that do not belong there (kube-proxy's
// alone on RKE2).
func (g group) fillOwned(st *BackendState, rs *rules.Ruleset) {
	members := ownership.KubeProxyOnly
	if st.Backend != g.expect {
		members = g.strays(st.Backend)
	}
	o := members.Find(rs, st.Backend == backend.NFTables)
	st.Owned = &o
	if g.embedded() && st.Backend != g.expect && !o.Empty() {
		st.strays = "k3s's " + g.names(writers(&o))
	}
	st.KubeProxyChains = len(o.Chains)
	st.KubeProxyRules = o.Rules
	for _, h := range o.KubeletHints {
		st.KubeletHints = append(st.KubeletHints, h.String())
	}
}

// SleepCtx sleeps d or until ctx ends, whichever comes first: the default
// Sleep of verify and watch.
func SleepCtx(ctx context.Context, d time.Duration) error { return sleep.Ctx(ctx, d) }
