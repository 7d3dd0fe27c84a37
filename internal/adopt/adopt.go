// Package adopt takes over a node where RKE2 already runs, without
// restarting it: it records the backend kube-proxy runs on now as this
// boot's plan (read from the live rules of every backend, kube-proxy's
// /proxyMode and RKE2's effective config), says plainly when the generator
// would choose another one at RKE2's next start or at the next boot, then
// lets systemd re-run the generator (whose auto decision keeps a backend
// this boot's plan records) and starts verify and watch. It never restarts
// or stops RKE2, writes no RKE2 config and loads no module: what runs stays
// exactly as it is.
package adopt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// Source is the decision source of an adopted plan.
const Source = plan.SourceAdopted

// Options are one adoption's inputs.
type Options struct {
	Root hostfs.Root
	// Facts are the probe's (no live rules needed: Reader reads them);
	// Config the operator config they are decided with.
	Facts  facts.Facts
	Config config.Config
	// Reader reads live rules (verify.NewReader in production).
	Reader netfilter.Reader
	// ProxyModeURL is kube-proxy's /proxyMode ("" to not ask).
	ProxyModeURL string
	Systemd      Systemd
	// Wait bounds the wait for kube-proxy's first rules; Poll is the pause
	// between reads (2 s when 0).
	Wait, Poll time.Duration
	DryRun     bool
	Sleep      func(ctx context.Context, d time.Duration) error
	Now        func() time.Time
	// Log gets one line per side effect.
	Log func(format string, args ...any)
	// Lock, when set, holds the node lock (apply's) while the plan is read
	// again and written: apply writes it under that lock when RKE2 starts,
	// and a switch relies on it. nil takes none.
	Lock func(ctx context.Context) (release func(), err error)
}

// Outcome is what an adoption came to.
type Outcome string

const (
	// Adopted: the plan is recorded (or, in a dry run, would be).
	Adopted Outcome = "adopted"
	// Planned: this boot already has a plan; nothing to adopt.
	Planned Outcome = "already-planned"
	// NotRunning: no RKE2 unit is active; its next start applies.
	NotRunning Outcome = "rke2-not-running"
	// Disabled: the decision is "off" (backend: off, disable-kube-proxy).
	Disabled Outcome = "disabled"
	// CannotTell: the live state does not say which backend runs (no
	// kube-proxy rules yet, or rules in more than one backend).
	CannotTell Outcome = "cannot-tell"
	// Refused: the live state contradicts itself (rules in one backend,
	// kube-proxy naming another mode).
	Refused Outcome = "refused"
)

// Choice is what the generator and apply would run kube-proxy on.
type Choice struct {
	Backend  backend.Backend `json:"backend,omitempty"`
	Disabled bool            `json:"disabled,omitempty"`
	Source   string          `json:"source"`
	Reasons  []string        `json:"reasons"`
}

// Result is what an adoption found and did.
type Result struct {
	Outcome Outcome `json:"outcome"`
	// Distribution runs kube-proxy here ("" is RKE2): what the output
	// names.
	Distribution distro.Kind `json:"distribution,omitempty"`
	// Unit is the active RKE2 (or k3s) unit.
	Unit     string      `json:"unit,omitempty"`
	Observed Observation `json:"observed"`
	// Message says, for every outcome but Adopted, why nothing was
	// recorded and what to do.
	Message string     `json:"message,omitempty"`
	Plan    *plan.Plan `json:"plan,omitempty"`
	// NextStart is what RKE2's next start in this boot would run (the
	// generator after the daemon-reload, with this plan); NextBoot what
	// the next boot would (no plan, no rules).
	NextStart *Choice `json:"next_start,omitempty"`
	NextBoot  *Choice `json:"next_boot,omitempty"`
	// Differences say plainly where NextStart or NextBoot leave the
	// backend kube-proxy runs on now, and what the operator can do.
	Differences []string `json:"differences,omitempty"`
	// Actions are what was done to systemd, in order.
	Actions []string `json:"actions,omitempty"`
}

// Run adopts the node. The error is a failure to read or to record (the
// node is then as it was, or has the plan but not every unit started).
func Run(ctx context.Context, o Options) (Result, error) {
	o.defaults()
	res := Result{Distribution: o.Facts.RKE2.Distribution}
	switch p, err := plan.Read(o.Root); {
	case err == nil:
		res.Outcome, res.Message = Planned, alreadyPlanned(p)
		return res, nil
	case !errors.Is(err, fs.ErrNotExist):
		return res, err
	}
	candidates := unitsToAdopt(o)
	for _, u := range candidates {
		if o.Systemd.IsActive(ctx, u) {
			res.Unit = u
			break
		}
	}
	if res.Unit == "" {
		res.Outcome = NotRunning
		res.Message = notRunning(o.Facts, candidates)
		return res, nil
	}
	now := decide.Decide(generatorView(o.Facts, ""), o.Config)
	if now.Disabled {
		res.Outcome = Disabled
		res.Message = fmt.Sprintf("rke2-proxy-backend is off here (source %s): %s Nothing to adopt.", now.Source, strings.Join(now.Reasons, " "))
		return res, nil
	}
	obs, err := o.waitForRules(ctx)
	res.Observed = obs
	if err != nil {
		return res, err
	}
	b, outcome, msg := judge(obs)
	if outcome != Adopted {
		res.Outcome, res.Message = outcome, msg
		return res, nil
	}
	res.Outcome = Adopted
	p := record(o.Facts, obs, b)
	start, boot := nextChoices(o.Facts, o.Config, b)
	res.NextStart, res.NextBoot = &start, &boot
	res.Differences = differences(o.Facts.RKE2.Distribution.Profile(), b, start, boot)
	p.Warnings = append(p.Warnings, res.Differences...)
	res.Plan = &p
	if o.DryRun {
		return res, nil
	}
	return res, o.carryOut(ctx, &res)
}

func (o *Options) defaults() {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = verify.SleepCtx
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// waitForRules observes until kube-proxy's rules are somewhere or Wait
// has passed: right after RKE2 reports ready, kube-proxy may not have
// synced yet.
func (o Options) waitForRules(ctx context.Context) (Observation, error) {
	deadline := o.Now().Add(o.Wait)
	for {
		obs, err := observe(ctx, o, o.Facts)
		left := deadline.Sub(o.Now())
		if err != nil || len(obs.KubeProxy) > 0 || left <= 0 {
			return obs, err
		}
		// The last read is at the deadline itself.
		if err := o.Sleep(ctx, min(o.Poll, left)); err != nil {
			return obs, err
		}
	}
}

// carryOut records the plan, then lets systemd catch up: a daemon-reload
// re-runs the generator, which now reads this plan and writes RKE2's
// drop-ins for the same backend (Wants= verify, apply --backend=B) for
// RKE2's next start; then verify, and watch when it is enabled (the
// package enables it; an operator's disable is kept), are started.
func (o Options) carryOut(ctx context.Context, res *Result) error {
	if written, err := o.writePlan(ctx, res); err != nil || !written {
		return err
	}
	Journal(*res)
	steps := []struct {
		what string
		run  func() error
	}{
		{"systemctl daemon-reload", func() error { return o.Systemd.DaemonReload(ctx) }},
		{"systemctl start --no-block " + units.VerifyUnit, func() error { return o.Systemd.StartNoBlock(ctx, units.VerifyUnit) }},
	}
	if o.Systemd.IsEnabled(ctx, units.WatchUnit) {
		steps = append(steps, struct {
			what string
			run  func() error
		}{"systemctl start --no-block " + units.WatchUnit, func() error { return o.Systemd.StartNoBlock(ctx, units.WatchUnit) }})
	} else {
		o.Log("%s is not enabled: not starting it (systemctl enable --now %s to watch for drift)", units.WatchUnit, units.WatchUnit)
	}
	for _, s := range steps {
		o.Log("[started]  %s", s.what)
		if err := s.run(); err != nil {
			o.Log("[failed]   %s: %v", s.what, err)
			return fmt.Errorf("the plan is recorded, but %w; run it by hand", err)
		}
		o.Log("[finished] %s", s.what)
		res.Actions = append(res.Actions, s.what)
	}
	return nil
}

// writePlan records res.Plan, under the node lock when Options.Lock is
// set, unless a plan appeared while adopt looked: RKE2 started meanwhile
// and its apply recorded what RKE2 was given, which an adopted plan
// written after it would contradict. res then says so; false is returned.
func (o Options) writePlan(ctx context.Context, res *Result) (bool, error) {
	if o.Lock != nil {
		release, err := o.Lock(ctx)
		if err != nil {
			return false, fmt.Errorf("nothing adopted: %w", err)
		}
		defer release()
		if p, err := plan.Read(o.Root); err == nil {
			*res = Result{Outcome: Planned, Distribution: res.Distribution, Message: alreadyPlanned(p) + " (" + res.Distribution.Name() + " started while adopt looked)", Unit: res.Unit, Observed: res.Observed}
			return false, nil
		}
	}
	o.Log("[started]  writing %s", o.Root.Path(hostfs.PlanFile))
	if _, err := plan.Write(o.Root, *res.Plan); err != nil {
		o.Log("[failed]   writing %s: %v", o.Root.Path(hostfs.PlanFile), err)
		return false, err
	}
	o.Log("[finished] writing %s", o.Root.Path(hostfs.PlanFile))
	return true, nil
}

func alreadyPlanned(p plan.Plan) string {
	return fmt.Sprintf("this boot already has a plan (%s, backend %s, source %s): verify and watch follow it; nothing to adopt",
		hostfs.PlanFile, planBackend(p), p.Decision.Source)
}

func planBackend(p plan.Plan) string {
	if p.Decision.Disabled {
		return "none (off)"
	}
	if p.AppliedBackend() == "" {
		return "none applied"
	}
	return string(p.AppliedBackend())
}
