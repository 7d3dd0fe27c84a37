// Package switchover moves one node's kube-proxy from one backend to
// another: record the choice, restart RKE2, wait for kube-proxy's rules in
// the new backend, remove the old backend's, verify, and roll back to the
// old backend when any of that fails or a signal comes. It is a journaled
// transaction: before each step the journal (internal/record/switchjournal)
// records the operator config's original bytes and the step, so a switch
// cut at any point is finished (Resume) or undone (Rollback) from that
// record. The
// steps talk to the host through small interfaces so a test can drive
// every path; the real ones are in config.go, systemd.go, netfilter.go,
// lock.go and switchjournal.File. Do (request.go) is the `switch` command
// below its flags: the checks before any change, the lock, the journal's
// resume or rollback, and assembling the Switch from the host's parts
// (prepare.go).
package switchover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// ConfigWriter reads the operator config before the switch, writes the
// backend into it and puts the original back, always from the snapshot the
// journal recorded.
type ConfigWriter interface {
	// Snapshot reads the file as it is before the switch.
	Snapshot() (switchjournal.Snapshot, error)
	// Set records b, computed from snap (never from the file as it is).
	Set(snap switchjournal.Snapshot, b backend.Backend) error
	// Restore puts snap back byte for byte (a link stays the same link).
	Restore(switchjournal.Snapshot) error
	// Describe names the file for the log.
	Describe() string
}

// PlanKeeper reads this boot's plan before the switch and puts it back in
// a rollback (FilePlan). The original config alone does not bring
// kube-proxy back when it says backend: auto: auto keeps the backend this
// boot's plan records, which after the switch's restart is To.
type PlanKeeper interface {
	// Read returns the plan's bytes, nil when there is none.
	Read() ([]byte, error)
	Restore(data []byte) error
}

// Restarter restarts RKE2, whose ExecStartPre (apply) reads the config and
// points kube-proxy at the recorded backend, b after this restart.
type Restarter interface {
	Restart(ctx context.Context, b backend.Backend) error
	Describe() string
}

// Verifier runs verify expecting backend b, waiting for kube-proxy's sync.
type Verifier interface {
	Verify(ctx context.Context, b backend.Backend) (*verify.Result, error)
}

// Cleaner removes the rules of kube-proxy's group (on k3s flannel's and
// kube-router's too) from backend b while kube-proxy runs in kubeProxy:
// the other backend of the switch, whichever step asks.
type Cleaner interface {
	Clean(ctx context.Context, b, kubeProxy backend.Backend) (*cleanup.Plan, error)
	// Owners are the group whose rules Clean removes (nil: kube-proxy's),
	// for the steps' lines.
	Owners() ownership.Group
}

// IPVSSweeper removes kube-proxy's ipvs leftovers once it left ipvs mode
// (cleanup.SweepAfterIPVS).
type IPVSSweeper interface {
	Sweep(ctx context.Context) (cleanup.AfterIPVS, error)
}

// UnitRerunner runs the verify unit again, so its last result (and so
// `systemctl --failed`) is the switched node's, not the one it judged
// while the restart was still moving rules.
type UnitRerunner interface {
	Rerun(ctx context.Context) error
	Describe() string
}

// NodeLock is the lock apply and switch share (apply.Lock). The caller
// holds it when a switch starts. It cannot be held across an RKE2 restart:
// the restart runs apply as ExecStartPre, which takes it, and systemctl
// restart returns only once that apply finished, so a switch holding it
// would wait for an apply that waits for the switch (until apply gave up
// and RKE2 started without our drop-in). So the switch lets go of it for
// exactly the restart and takes it back after; meanwhile the journal,
// written under the lock just before, names this live process as the
// switch's owner, and every other switch (plain, --resume, --rollback)
// refuses while that owner lives.
type NodeLock interface {
	Unlock()
	Lock(ctx context.Context) error
}

// Switch is one switch on one node.
type Switch struct {
	From, To backend.Backend
	Config   ConfigWriter
	// Plans, when set, keeps this boot's plan in the journal for a rollback.
	Plans     PlanKeeper
	Restarter Restarter
	Verifier  Verifier
	Cleaner   Cleaner
	Hints     HintTidier
	// FromIPVS marks a migration off ipvs: kube-proxy ran ipvs mode over
	// From's iptables (the plan said so). The switch then sweeps what ipvs
	// leaves (Sweeper, required) and, when To is From, cleans no backend:
	// its kube-proxy rules are the live ones before and after the restart.
	FromIPVS bool
	Sweeper  IPVSSweeper
	// Translation is the migration's report (TranslateIPVS), kept in the
	// journal so a resumed switch still has it.
	Translation []string
	// VerifyUnit, when set, is re-run last.
	VerifyUnit UnitRerunner
	// Alternative, when set, says where the host's iptables alternative
	// points ("legacy", "nft", "" unknown): kubelet writes its hint chains
	// with it, so the node fails verify while it does not fit kube-proxy's
	// backend, whatever the switch did (alternativeGap).
	Alternative func() string
	// Journal records each step before it runs (required).
	Journal switchjournal.Store
	// Lock is held by the caller when Run, Resume or Rollback starts; nil
	// when the caller holds none (tests of the steps alone).
	Lock NodeLock
	// RollbackContext is what a rollback runs in: the caller cancels it to
	// stop a rollback where it is (a second signal); the journal then
	// says where. nil: never cancelled.
	RollbackContext context.Context
	// Log gets one [started]/[finished]/[failed] line per step.
	Log io.Writer

	journal *switchjournal.Journal
	// failing is what the last verify step found the node still failing
	// on that is no reason to roll back (kubelet's hint chains).
	failing []string
}

// ErrRolledBack is wrapped by Run's error when the switch failed and the
// node is back on the old backend, verified.
var ErrRolledBack = errors.New("switch failed; rolled back to the previous backend")

// ErrStillFailing is wrapped by the error of a switch or rollback whose
// steps held, kube-proxy complete where it should be, on a node that still
// fails verify for what no restart moves: kubelet's hint chains, which
// kubelet writes with the host's iptables alternative. The error says what
// differs and the commands that fix it.
var ErrStillFailing = errors.New("the node still fails verify")

// ErrUnfinished is wrapped by the error of a switch (or rollback) that
// stopped with its journal kept: switch --resume or --rollback finishes it.
var ErrUnfinished = errors.New("switch unfinished")

// The journal's step names, in order.
var (
	forwardSteps  = switchjournal.SwitchSteps
	rollbackSteps = switchjournal.RollbackSteps
)

// firstChange is the forward step from which the node may differ from
// before the switch: a rollback is due from there on.
const firstChange = 1

type step struct {
	name, what string
	run        func(ctx context.Context) error
	// warnOnly steps log their failure and go on.
	warnOnly bool
}

func (s *Switch) forward(l *logger) []step {
	var snap = func() switchjournal.Snapshot { return s.journal.Config }
	steps := []step{
		s.cleanStep(forwardSteps[0], s.To, fmt.Sprintf("remove %s (kube-proxy uses %s until the restart)", staleRules(s.sweptFrom(s.To)), s.From)),
		{forwardSteps[1], fmt.Sprintf("record backend: %s in %s (its original is in %s until the switch ends)", s.To, s.Config.Describe(), s.Journal.Describe()), func(context.Context) error { return s.Config.Set(snap(), s.To) }, false},
		{forwardSteps[2], "restart " + s.Restarter.Describe(), func(ctx context.Context) error { return s.restart(ctx, s.To) }, false},
		{forwardSteps[3], fmt.Sprintf("wait for kube-proxy's rules in %s", s.To), func(ctx context.Context) error { return s.waitSynced(ctx, s.To) }, false},
		s.cleanStep(forwardSteps[4], s.From, "remove "+s.sweptFrom(s.From)),
	}
	if s.FromIPVS {
		steps = append(steps, step{forwardSteps[5], "remove what ipvs mode left: its chains in both iptables backends, kube-proxy's KUBE-* ipsets, kube-ipvs0 and the IPVS virtual servers on its addresses (never another owner's); say the sysctls that stay", func(ctx context.Context) error { return s.sweepIPVS(ctx, l) }, false})
	}
	steps = append(steps,
		step{forwardSteps[6], s.hintStep(s.To), func(ctx context.Context) error { return s.tidyHints(ctx, l, s.To) }, false},
		step{forwardSteps[7], fmt.Sprintf("verify: kube-proxy complete in %s, nothing stranded", s.To), func(ctx context.Context) error { return s.verifyOK(ctx, l, s.To) }, false})
	if s.VerifyUnit != nil {
		steps = append(steps, step{forwardSteps[8], s.rerunStep(), s.VerifyUnit.Rerun, true})
	}
	return steps
}

// cleanStep removes kube-proxy's rules from b, except on a migration off
// ipvs that stays on its backend: there b's rules are the live ones (ipvs
// mode's before the restart, iptables mode's after), and the sweep takes
// only ipvs mode's own chains.
func (s *Switch) cleanStep(name string, b backend.Backend, what string) step {
	if s.FromIPVS && s.From == s.To {
		return step{name, fmt.Sprintf("leave %s's kube-proxy rules (kube-proxy stays on %s and leaves only ipvs mode; the ipvs sweep removes ipvs mode's own chains)", b, b), func(context.Context) error { return nil }, false}
	}
	return step{name, what, func(ctx context.Context) error { return s.clean(ctx, b) }, false}
}

// stepIndex is where the step named name is in steps (-1 for none).
func stepIndex(steps []step, name string) int {
	for i, st := range steps {
		if st.name == name {
			return i
		}
	}
	return -1
}

func (s *Switch) backward(l *logger) []step {
	steps := []step{
		{rollbackSteps[0], s.restoreWhat(), func(context.Context) error { return s.restore() }, false},
		{rollbackSteps[1], "restart " + s.Restarter.Describe(), func(ctx context.Context) error { return s.restart(ctx, s.From) }, false},
		{rollbackSteps[2], fmt.Sprintf("wait for kube-proxy's rules in %s", s.From), func(ctx context.Context) error { return s.waitSynced(ctx, s.From) }, false},
		s.abandonStep(),
		{rollbackSteps[4], fmt.Sprintf("verify: kube-proxy complete in %s, nothing stranded", s.From), func(ctx context.Context) error { return s.verifyOK(ctx, l, s.From) }, false},
	}
	if s.VerifyUnit != nil {
		steps = append(steps, step{rollbackSteps[5], s.rerunStep(), s.VerifyUnit.Rerun, true})
	}
	return steps
}

// restoreWhat is the rollback's first step: the plan goes back too when
// the journal kept it (and in a plan, before there is a journal).
func (s *Switch) restoreWhat() string {
	if s.Plans != nil && (s.journal == nil || len(s.journal.Plan) > 0) {
		return fmt.Sprintf("restore the original %s, and %s as the switch found it, from %s", s.Config.Describe(), hostfs.PlanFile, s.Journal.Describe())
	}
	return fmt.Sprintf("restore the original %s from %s", s.Config.Describe(), s.Journal.Describe())
}

// restore puts the config back, then the plan: the restart that follows
// re-runs the generator and apply, which then keep From as they kept it
// before the switch (apply records the plan anew).
func (s *Switch) restore() error {
	if err := s.Config.Restore(s.journal.Config); err != nil {
		return err
	}
	if s.Plans == nil || len(s.journal.Plan) == 0 {
		return nil
	}
	return s.Plans.Restore(s.journal.Plan)
}

func whats(steps []step) []string {
	out := make([]string, len(steps))
	for i, st := range steps {
		out[i] = st.what
	}
	return out
}

// Plan lists the steps Run takes, for --dry-run and the log.
func (s *Switch) Plan() []string { return whats(s.forward(nil)) }

func (s *Switch) hintStep(b backend.Backend) string {
	return fmt.Sprintf("remove kubelet's hint and canary chains from the other iptables backend once kubelet wrote them in %s", verify.HintBackend(b))
}

func (s *Switch) rerunStep() string {
	return "run " + s.VerifyUnit.Describe() + " again (its run during the restart saw the old backend's rules)"
}

// RollbackPlan lists what Run does when a step after the config write fails.
func (s *Switch) RollbackPlan() []string { return whats(s.backward(nil)) }

// Run switches the node: it records the config as it is in the journal,
// then runs each step, journaling it first. On a failure (or a cancelled
// ctx: the first signal) after the config write it rolls back; the error
// then wraps ErrRolledBack when the rollback held, and ErrUnfinished when
// it stopped with the journal kept.
func (s *Switch) Run(ctx context.Context) error {
	snap, err := s.Config.Snapshot()
	if err != nil {
		return fmt.Errorf("nothing changed: %w", err)
	}
	var planned []byte
	if s.Plans != nil {
		if planned, err = s.Plans.Read(); err != nil {
			return fmt.Errorf("nothing changed: %w", err)
		}
	}
	s.journal = &switchjournal.Journal{Schema: switchjournal.Schema, From: s.From, To: s.To, Phase: switchjournal.PhaseSwitch, Step: forwardSteps[0], Config: snap, Plan: planned, Owner: switchjournal.Self(), IPVSTranslation: s.Translation}
	if s.FromIPVS {
		s.journal.FromProxyMode = ipvsMode
	}
	return s.switched(s.runForward(ctx, 0))
}

// switched is a forward run's outcome: done, unless the node still fails.
func (s *Switch) switched(err error) error {
	if err != nil || len(s.failing) == 0 {
		return err
	}
	return fmt.Errorf("switched: kube-proxy uses %s, but %w: %s", s.To, ErrStillFailing, strings.Join(s.failing, "; "))
}

// Resume finishes the switch j records, from the step it reached (which is
// run again: every step can be). A journal already rolling back goes on
// rolling back: the switch failed once for a reason.
func (s *Switch) Resume(ctx context.Context, j *switchjournal.Journal) error {
	s.adopt(j)
	l := &logger{w: s.Log}
	if j.Phase == switchjournal.PhaseRollback {
		l.note(fmt.Sprintf("the journal says the switch to %s was rolling back (%s) at step %s: finishing the rollback", s.To, j.Reason, j.Step))
		// The switch did not happen: a finished rollback is still its failure.
		why := errors.New(j.Reason)
		return s.rollbackResult(s.runBackward(j.StepIndex(), why), why)
	}
	l.note(fmt.Sprintf("resuming the switch from %s to %s at step %s", s.From, s.To, j.Step))
	at := stepIndex(s.forward(l), j.Step)
	if at < 0 {
		return fmt.Errorf("%s records step %s, which this switch from %s to %s does not have: finish it with --rollback", s.Journal.Describe(), j.Step, s.From, s.To)
	}
	return s.switched(s.runForward(ctx, at))
}

// Rollback undoes the switch j records: from where a rollback stopped, or
// from the start of one when the switch was going forward. A switch that
// had not reached the config write changed nothing to undo. nil means the
// node is back on From, verified, the config the original.
func (s *Switch) Rollback(_ context.Context, j *switchjournal.Journal) error {
	s.adopt(j)
	l := &logger{w: s.Log}
	if j.Phase == switchjournal.PhaseRollback {
		l.note(fmt.Sprintf("finishing the rollback to %s from step %s", s.From, j.Step))
		return s.asked(s.runBackward(j.StepIndex(), errors.New(j.Reason)), errors.New(j.Reason))
	}
	if j.StepIndex() < firstChange {
		l.note(fmt.Sprintf("the switch to %s stopped at step %s, before it wrote %s: nothing to undo", s.To, j.Step, s.Config.Describe()))
		return s.Journal.Remove()
	}
	why := fmt.Errorf("rollback asked for (the switch had reached step %s)", j.Step)
	l.note(fmt.Sprintf("rolling back to %s", s.From))
	return s.asked(s.runBackward(0, why), why)
}

// asked is the outcome of a rollback the operator asked for: done is nil,
// unless the node still fails.
func (s *Switch) asked(rerr, why error) error {
	if rerr != nil {
		return s.rollbackResult(rerr, why)
	}
	if len(s.failing) > 0 {
		return fmt.Errorf("rolled back: kube-proxy uses %s and the config is the original, but %w: %s", s.From, ErrStillFailing, strings.Join(s.failing, "; "))
	}
	return nil
}

func (s *Switch) adopt(j *switchjournal.Journal) {
	s.From, s.To = j.From, j.To
	s.FromIPVS, s.Translation = j.FromProxyMode == ipvsMode, j.IPVSTranslation
	j.Owner = switchjournal.Self()
	s.journal = j
}

func (s *Switch) runForward(ctx context.Context, from int) error {
	l := &logger{w: s.Log}
	steps := s.forward(l)
	for i := from; i < len(steps); i++ {
		st := steps[i]
		s.journal.Phase, s.journal.Step = switchjournal.PhaseSwitch, st.name
		if st.warnOnly {
			// The verdict is in: the switch is done whatever the rerun says.
			if err := s.Journal.Remove(); err != nil {
				l.note("warning: " + err.Error())
			}
			l.step(st.what, func() error { s.rerunUnit(ctx, l); return nil })
			return nil
		}
		err := s.Journal.Write(s.journal)
		if err == nil {
			err = cause(ctx)
		}
		if err == nil {
			// A step the signal cut may have returned early with a partial
			// answer (verify skips what its cancelled context stopped): it
			// counts as failed.
			err = l.step(st.what, func() error { return interrupted(ctx, st.run(ctx)) })
		} else {
			l.fail(st.what, err)
		}
		if errors.Is(err, errLockLost) {
			return fmt.Errorf("%w at step %s: %w; finish it with rke2-proxy-backend switch --resume or --rollback", ErrUnfinished, st.name, err)
		}
		if err == nil {
			continue
		}
		if i <= firstChange {
			// The config write is atomic and Set refuses a file it cannot
			// edit before writing, so the file is the original, or the put
			// back below makes it so.
			if i == firstChange {
				if rerr := s.Config.Restore(s.journal.Config); rerr != nil {
					return fmt.Errorf("%w at step %s: %w, and putting the original back failed: %w", ErrUnfinished, st.name, err, rerr)
				}
			}
			if rerr := s.Journal.Remove(); rerr != nil {
				l.note("warning: " + rerr.Error())
			}
			return fmt.Errorf("nothing changed: %w", err)
		}
		l.note(fmt.Sprintf("rolling back to %s", s.From))
		return s.rollbackResult(s.runBackward(0, err), err)
	}
	return s.Journal.Remove()
}

// runBackward runs the rollback from step from, journaling each step. It
// runs in RollbackContext, not in the switch's ctx: a cancelled switch (the
// operator's Ctrl-C, SUC's deadline) still deserves the rollback.
func (s *Switch) runBackward(from int, why error) error {
	rctx := s.RollbackContext
	if rctx == nil {
		rctx = context.Background()
	}
	l := &logger{w: s.Log}
	steps := s.backward(l)
	s.journal.Phase, s.journal.Reason = switchjournal.PhaseRollback, why.Error()
	for i := from; i < len(steps); i++ {
		st := steps[i]
		s.journal.Step = st.name
		if st.warnOnly {
			if err := s.Journal.Remove(); err != nil {
				l.note("warning: " + err.Error())
			}
			l.step(st.what, func() error { s.rerunUnit(rctx, l); return nil })
			return nil
		}
		if err := s.Journal.Write(s.journal); err != nil {
			// Unrecorded, the rollback still beats stopping here.
			l.note("warning: " + err.Error())
		}
		err := cause(rctx)
		if err == nil {
			err = l.step(st.what, func() error { return interrupted(rctx, st.run(rctx)) })
		} else {
			l.fail(st.what, err)
		}
		if err != nil {
			return fmt.Errorf("%w: the rollback stopped at step %s (%w); %s keeps the original config: run rke2-proxy-backend switch --rollback to finish it", ErrUnfinished, st.name, err, s.Journal.Describe())
		}
	}
	return s.Journal.Remove()
}

func (s *Switch) rollbackResult(rerr, err error) error {
	if rerr != nil {
		return fmt.Errorf("switch to %s failed (%w) and so did the rollback to %s: %w; the node needs a hand: rke2-proxy-backend verify names each fix", s.To, err, s.From, rerr)
	}
	if len(s.failing) > 0 {
		return fmt.Errorf("%w: %s%s: %w; and %w: %s", ErrRolledBack, s.From, s.ipvsRollbackNote(), err, ErrStillFailing, strings.Join(s.failing, "; "))
	}
	return fmt.Errorf("%w: %s%s: %w", ErrRolledBack, s.From, s.ipvsRollbackNote(), err)
}

// errLockLost stops a switch that could not take the node lock back after
// a restart: without it, nothing it does is safe.
var errLockLost = errors.New("cannot take the node lock back after the restart")

// restart restarts RKE2 onto b (restartOnce) and checks that the plan
// records b: an apply run by hand that decided before the switch wrote the
// config, and waited for the lock, can take it in the restart's window
// and record its stale choice after the restart's apply (the drop-in RKE2
// reads next, and plan.json, would then say the old backend while
// kube-proxy runs the new one). One more restart has the restart's apply
// record b again; a second mismatch fails the step.
func (s *Switch) restart(ctx context.Context, b backend.Backend) error {
	for try := 1; ; try++ {
		err := s.restartOnce(ctx, b)
		if err != nil || s.Plans == nil {
			return err
		}
		got := s.planned()
		switch {
		case got == "" || got == b:
			return nil
		case try == 2:
			return fmt.Errorf("%s records %s after two restarts onto %s: apply chose %[2]s (the plan's reasons say why)", hostfs.PlanFile, got, b)
		}
		fmt.Fprintf(s.Log, "rke2-proxy-backend: switch: %s records %s, not %s, after the restart (an apply run by hand may have written it after the restart's): restarting %s once more\n", hostfs.PlanFile, got, b, s.Restarter.Describe())
	}
}

// planned is the backend plan.json records RKE2 was given ("" when it
// cannot tell, or none was).
func (s *Switch) planned() backend.Backend {
	data, err := s.Plans.Read()
	if err != nil || data == nil {
		return ""
	}
	p, err := plan.Parse(data)
	if err != nil {
		return ""
	}
	return p.AppliedBackend()
}

// restartOnce restarts RKE2 without the node lock (see NodeLock), then
// takes it back and checks the journal is still this switch's.
func (s *Switch) restartOnce(ctx context.Context, b backend.Backend) error {
	if s.Lock == nil {
		return s.Restarter.Restart(ctx, b)
	}
	s.Lock.Unlock()
	err := s.Restarter.Restart(ctx, b)
	// apply, run by the restart, is done once systemctl returns; a manual
	// apply is bounded by its own lock wait. Take it back whatever the
	// restart said: the rollback needs it too.
	if lerr := s.Lock.Lock(context.WithoutCancel(ctx)); lerr != nil {
		return fmt.Errorf("%w: %w", errLockLost, lerr)
	}
	j, jerr := s.Journal.Read()
	if jerr != nil || j == nil || j.Owner != s.journal.Owner {
		return fmt.Errorf("%w: %s no longer names this switch (%v)", errLockLost, s.Journal.Describe(), jerr)
	}
	return err
}

// interrupted is a step's outcome once ctx may have been cancelled: the
// signal that did it first (a step that failed because of it says only
// "context canceled"), then what the step said.
func interrupted(ctx context.Context, err error) error {
	c := cause(ctx)
	switch {
	case c == nil:
		return err
	case err == nil:
		return c
	}
	return fmt.Errorf("%w (%v)", c, err)
}

// cause is ctx's error with the reason its canceller gave (the signal).
func cause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

// sweptNames names whose rules the switch swept from b, for the outcome:
// "kube-proxy" on RKE2, as it always said; on k3s "kube-proxy, flannel or
// kube-router" (kube-proxy alone in iptables-nft beside nftables mode).
func (s *Switch) sweptNames(b backend.Backend) string {
	return cleanup.OwnerNames(s.Cleaner.Owners().StraysIn(b, s.otherThan(b)), "or")
}

// staleRules is sweptFrom for the step before the restart, whose line on
// RKE2 always read "stale kube-proxy rules from B".
func staleRules(what string) string {
	if rest, ok := strings.CutPrefix(what, "kube-proxy's rules"); ok {
		return "stale kube-proxy rules" + rest
	}
	return strings.Replace(what, "the rules of", "the stale rules of", 1)
}

// sweptFrom says what a clean step takes from b: "kube-proxy's rules
// from B" on RKE2, as its lines always said; on k3s the group's, narrowed
// around nftables mode as LiveCleaner narrows it (Group.StraysIn,
// Group.LeftBeside).
func (s *Switch) sweptFrom(b backend.Backend) string {
	group, kubeProxy := s.Cleaner.Owners(), s.otherThan(b)
	if where, left := group.LeftBeside(b, kubeProxy); len(left) > 0 {
		return fmt.Sprintf("kube-proxy's rules from %s, and those of %s from %s", b, cleanup.OwnerNames(left, "and"), where)
	}
	if b == backend.NFTables {
		return fmt.Sprintf("kube-proxy's rules from %s", b)
	}
	if g := group.StraysIn(b, kubeProxy); len(g) > 1 {
		return fmt.Sprintf("the rules of %s from %s", cleanup.OwnerNames(g, "and"), b)
	}
	return fmt.Sprintf("kube-proxy's rules from %s", b)
}

// otherThan is where kube-proxy runs while a step cleans b: every step
// that cleans a backend runs while kube-proxy is on the switch's other
// one (To is cleaned before the restart and in the rollback, From after
// the restart).
func (s *Switch) otherThan(b backend.Backend) backend.Backend {
	if b == s.To {
		return s.From
	}
	return s.To
}

// clean removes the group's rules from b.
func (s *Switch) clean(ctx context.Context, b backend.Backend) error {
	p, err := s.Cleaner.Clean(ctx, b, s.otherThan(b))
	if err != nil {
		return err
	}
	if len(p.Removals) > 0 {
		fmt.Fprintf(s.Log, "rke2-proxy-backend: switch:   removed %d %s object(s) from %s\n", len(p.Removals), cleanup.OwnerNames(p.Owners, "and"), b)
	}
	return nil
}

// tidyHints removes the old kubelet's hint chains once the restarted
// kubelet wrote its own where b wants them. Leftovers it must keep are a
// warning with their fix, not a failure: RKE2's kube-proxy image follows
// IPTABLES_MODE, not the hint, and the fix is the host's, not ours.
func (s *Switch) tidyHints(ctx context.Context, l *logger, b backend.Backend) error {
	t, err := s.Hints.Tidy(ctx, b)
	if err != nil {
		return err
	}
	if len(t.Removed) > 0 {
		l.note(fmt.Sprintf("  removed %d chain(s) the previous kubelet left: %s", len(t.Removed), strings.Join(t.Removed, "; ")))
	}
	if len(t.Left) > 0 {
		flavour := strings.TrimPrefix(string(t.Want), "iptables-")
		l.note(fmt.Sprintf("warning: kubelet's chains left in place: %s (fix: point the host's iptables at %s: update-alternatives --set iptables /usr/sbin/iptables-%s; update-alternatives --set ip6tables /usr/sbin/ip6tables-%s; then switch again or reboot the node; until then verify reports [kubelet-hint])",
			strings.Join(t.Left, "; "), t.Want, flavour, flavour))
	}
	return nil
}

// rerunUnit runs the verify unit again. Its outcome does not decide the
// switch (verifyOK did): a failure is a warning naming its journal.
func (s *Switch) rerunUnit(ctx context.Context, l *logger) {
	if err := s.VerifyUnit.Rerun(ctx); err != nil {
		l.note(fmt.Sprintf("warning: %s failed after the switch: %v (journalctl -u %s says why; rke2-proxy-backend verify names each fix)", s.VerifyUnit.Describe(), err, s.VerifyUnit.Describe()))
	}
}

// waitSynced waits until kube-proxy's whole skeleton is in b. Stranded
// rules elsewhere are expected here: the next step removes them.
func (s *Switch) waitSynced(ctx context.Context, b backend.Backend) error {
	res, err := s.Verifier.Verify(ctx, b)
	if err != nil {
		return err
	}
	for _, st := range res.Backends {
		if st.Backend == b && st.Complete {
			return nil
		}
	}
	return fmt.Errorf("kube-proxy's rules did not appear complete in %s: %s", b, findings(res.Findings))
}

// verifyOK is verify's whole verdict, as the verify unit will give it,
// but for kubelet's hint chains: they follow the host's iptables
// alternative, which no restart moves, so they are no reason to roll back
// (RKE2's kube-proxy follows IPTABLES_MODE, not the hint). They, and an
// alternative that does not fit b (kubelet may not have written its hints
// yet), are kept in s.failing: the switch or rollback then ends saying the
// node still fails, and how to fix it.
func (s *Switch) verifyOK(ctx context.Context, l *logger, b backend.Backend) error {
	s.failing = nil
	res, err := s.Verifier.Verify(ctx, b)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		l.note(fmt.Sprintf("warning: %s (fix: %s)", w.Message, w.Fix))
	}
	var hints, rest []verify.Finding
	for _, f := range res.Findings {
		if f.Kind == verify.KindKubeletHint {
			hints = append(hints, f)
		} else {
			rest = append(rest, f)
		}
	}
	if len(rest) > 0 || !res.OK && len(hints) == 0 {
		return fmt.Errorf("verify %s: %s", res.Verdict, findings(res.Findings))
	}
	if s.Alternative != nil {
		if gap := alternativeGap(s.Alternative(), b, s.Restarter.Describe()); gap != "" {
			s.failing = append(s.failing, gap)
			hints = nil // their cause, with its fix
		}
	}
	if len(hints) > 0 {
		s.failing = append(s.failing, findings(hints))
	}
	for _, f := range s.failing {
		l.note("warning: the node still fails verify: " + f)
	}
	return nil
}

func findings(fs []verify.Finding) string {
	if len(fs) == 0 {
		return "no finding"
	}
	// The first few say what is wrong; verify lists them all.
	const show = 3
	var parts []string
	for _, f := range fs[:min(show, len(fs))] {
		parts = append(parts, fmt.Sprintf("[%s] %s (fix: %s)", f.Kind, f.Message, f.Fix))
	}
	if len(fs) > show {
		parts = append(parts, fmt.Sprintf("and %d more finding(s): run rke2-proxy-backend verify", len(fs)-show))
	}
	return strings.Join(parts, "; ")
}

// logger writes ignition-style step lines.
type logger struct {
	w io.Writer
	n int
}

func (l *logger) step(what string, fn func() error) error {
	l.n++
	fmt.Fprintf(l.w, "rke2-proxy-backend: switch: op(%d): [started]  %s\n", l.n, what)
	if err := fn(); err != nil {
		fmt.Fprintf(l.w, "rke2-proxy-backend: switch: op(%d): [failed]   %s: %v\n", l.n, what, err)
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(l.w, "rke2-proxy-backend: switch: op(%d): [finished] %s\n", l.n, what)
	return nil
}

// steps runs fns in order, each as the step of the same index in whats,
// and stops at the first that fails: a later step relies on the ones
// before it.
func (l *logger) steps(whats []string, fns ...func() error) error {
	for i, fn := range fns {
		if err := l.step(whats[i], fn); err != nil {
			return err
		}
	}
	return nil
}

func (l *logger) fail(what string, err error) {
	l.n++
	fmt.Fprintf(l.w, "rke2-proxy-backend: switch: op(%d): [failed]   %s: %v\n", l.n, what, err)
}

func (l *logger) note(s string) {
	fmt.Fprintf(l.w, "rke2-proxy-backend: switch: %s\n", s)
}
