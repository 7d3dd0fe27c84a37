package switchover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
)

// DefaultTimeout bounds the restart and each wait for kube-proxy: an
// RKE2 server restart plus an image pull on a slow link takes minutes.
const DefaultTimeout = 10 * time.Minute

// lockWait bounds the wait for an apply holding the node lock (RKE2
// starting); another switch holding it is refused at once.
const lockWait = apply.DefaultLockWait

// Request is one `switch` as the operator asked for it: a new switch to
// To, or --resume / --rollback of the unfinished one the journal records.
type Request struct {
	Root hostfs.Root
	// ConfigFile is the operator config the switch records the backend in
	// (a host path, hostfs.ConfigFile unless --config says otherwise).
	ConfigFile string
	// To is --to as given: "" with Resume or Rollback.
	To                       string
	DryRun, Resume, Rollback bool
	// Timeout bounds the RKE2 restart and each wait for kube-proxy.
	Timeout time.Duration
	// Out gets the outcome; Log the steps, the lock's waits, verify's
	// progress and what a signal does.
	Out, Log io.Writer
	// JSON makes Out one JSON document (JSONOutcome) instead of lines.
	JSON bool
	// Distribution is --distribution ("": found from the host's units).
	Distribution distro.Kind

	// report is the ipvs translation prepare made, for the JSON form.
	report *[]Translation
	// distro is the distribution Do found, once, for every step.
	distro distro.Distro
	// layout is its units and config, read once per run (nil: read where
	// needed): the lock's drop-in directory, the operator's kube-proxy
	// args and kube-proxy's endpoint all come from it.
	layout *facts.RKE2
}

// UsageError is a request the switch refuses as asked, before it changes
// anything: its flags, a config that would not take the switch, a backend
// this host cannot run, a journal it cannot read (exit 2, where every
// other error of Do is the node's: exit 1).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(err error) error { return &UsageError{Err: err} }

// check refuses a request whose flags do not go together, and parses To.
func (r Request) check() (backend.Backend, error) {
	if r.Resume && r.Rollback {
		return "", usage(errors.New("--resume and --rollback: choose one"))
	}
	finishing := r.Resume || r.Rollback
	if finishing && r.DryRun {
		return "", usage(errors.New("--dry-run goes with --to: the journal says what --resume or --rollback would do (" + hostfs.SwitchJournal + ")"))
	}
	var to backend.Backend
	switch {
	case r.To == "" && !finishing:
		return "", usage(fmt.Errorf("--to is required: one of %s (or --resume / --rollback to finish an unfinished switch)", backend.Names()))
	case r.To != "":
		b, err := backend.Parse(r.To)
		if err != nil {
			return "", usage(fmt.Errorf("--to: %w (switch needs a backend; auto and off are config choices, set them in %s)", err, hostfs.ConfigFile))
		}
		to = b
	}
	if r.Timeout <= 0 {
		return "", usage(fmt.Errorf("--timeout %s: must be positive", r.Timeout))
	}
	return to, nil
}

// Do carries the request out: a dry run prints the plan; a switch, a
// resume or a rollback runs under the node lock, with the journal, and
// prints its outcome. The error is a *UsageError when the request is what
// is wrong.
func Do(ctx context.Context, r Request) error {
	if r.JSON {
		return doJSON(ctx, r)
	}
	to, err := r.check()
	if err != nil {
		return err
	}
	r.distro = distro.Find(r.Root, r.Distribution)
	layout, _ := facts.RKE2Layout(r.Root, r.distro.Kind)
	r.layout = &layout
	journal := switchjournal.File{Root: r.Root}
	if r.DryRun {
		// Read-only: no lock (taking it writes the lock file).
		if j, err := journal.Read(); err != nil {
			return usage(err)
		} else if j != nil {
			return unfinished(j)
		}
		s, done, err := r.prepare(ctx, to)
		if err != nil || done {
			return err
		}
		r.printPlan(s)
		return nil
	}
	if err := ownNetns(r.Root); err != nil {
		return usage(err)
	}
	if _, err := SystemctlUnder(r.Root, r.Timeout); err != nil {
		return usage(err)
	}

	// Installed before the lock so no signal can land between taking it
	// and journaling. The checks and RKE2's unit are looked up in ctx, not
	// sctx: a signal meanwhile is seen by the switch at its first step,
	// and handled there as at any later one.
	sctx, rctx, stop := interrupts(ctx, r.Log)
	defer stop()
	lock := &ApplyLock{Locking: apply.Locking{
		Root: r.Root, DropInPath: r.dropInPath(), Wait: lockWait,
		Log: func(format string, args ...any) {
			fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: "+format+"\n", args...)
		},
	}}
	if err := lock.Lock(sctx); err != nil {
		return err
	}
	defer lock.Unlock()
	j, err := journal.Read()
	if err != nil {
		return usage(err)
	}
	if j != nil && j.Owner.Alive() {
		return fmt.Errorf("another rke2-proxy-backend switch (pid %d) is moving kube-proxy from %s to %s (%s, step %s, %s): wait for it to finish", j.Owner.PID, j.From, j.To, j.Phase, j.Step, hostfs.SwitchJournal)
	}
	// No switch runs now, and none can start while this one holds the lock.
	removed, err := r.sweepTemps(j)
	for _, p := range removed {
		fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: removed %s, left by an interrupted switch\n", p)
	}
	if err != nil {
		fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: warning: %v\n", err)
	}
	finishing := r.Resume || r.Rollback
	if j != nil && !finishing {
		return unfinished(j)
	}
	if !finishing {
		s, done, err := r.prepare(ctx, to)
		if err != nil || done {
			return err
		}
		s.Journal, s.Lock, s.RollbackContext = journal, lock, rctx
		for _, w := range s.alternativeWarnings() {
			fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: %s\n", w)
		}
		return r.outcome(s, s.Run(sctx))
	}
	if j == nil {
		verb := map[bool]string{true: "resume", false: "roll back"}[r.Resume]
		_, err := fmt.Fprintf(r.Out, "switch: no unfinished switch (%s absent): nothing to %s\n", hostfs.SwitchJournal, verb)
		return err
	}
	if to != "" && to != j.To {
		return usage(fmt.Errorf("--to %s: the unfinished switch in %s goes to %s: leave out --to, or --rollback it first", to, hostfs.SwitchJournal, j.To))
	}
	s, err := r.assemble(ctx, j.From, j.To, journal, lock, rctx)
	if err != nil {
		return err
	}
	if r.Resume {
		return r.outcome(s, s.Resume(sctx, j))
	}
	return r.outcome(s, s.Rollback(sctx, j))
}

// outcome says where kube-proxy ended when the switch, resume or rollback
// did what it was asked.
func (r Request) outcome(s *Switch, err error) error {
	if err != nil {
		return err
	}
	switch {
	case r.Rollback && s.FromIPVS:
		_, err = fmt.Fprintf(r.Out, "switch: rolled back: kube-proxy uses %s%s; the config is the original\n", s.From, s.ipvsRollbackNote())
	case r.Rollback:
		_, err = fmt.Fprintf(r.Out, "switch: rolled back: kube-proxy uses %s; the config is the original; no %s rules left in %s\n", s.From, s.sweptNames(s.To), s.To)
	case s.FromIPVS:
		_, err = fmt.Fprintf(r.Out, "switch: kube-proxy left ipvs mode: it runs %s mode on %s, verified; ipvs's leftovers are swept\n", s.To.ProxyMode(), s.To)
	default:
		_, err = fmt.Fprintf(r.Out, "switch: kube-proxy uses %s; no %s rules left in %s\n", s.To, s.sweptNames(s.From), s.From)
	}
	return err
}

// unfinished is the refusal a plain switch gives while a journal waits.
func unfinished(j *switchjournal.Journal) error {
	what := "the switch"
	if j.Phase == switchjournal.PhaseRollback {
		what = "its rollback"
	}
	return fmt.Errorf("an unfinished switch from %s to %s stopped at step %s of %s (%s; its process %d is gone): run `rke2-proxy-backend switch --resume` to finish it, or `rke2-proxy-backend switch --rollback` to undo it; a new switch starts only after",
		j.From, j.To, j.Step, what, hostfs.SwitchJournal, j.Owner.PID)
}

// printPlan is the dry run's output: the steps, then the rollback's.
func (r Request) printPlan(s *Switch) {
	w := r.Out
	fmt.Fprintf(w, "switch: %s -> %s (dry run: nothing changed)\n", s.From, s.To)
	steps := s.Plan()
	for i, st := range steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, st)
	}
	fmt.Fprintf(w, "if a step from 3 on fails, or a signal comes, roll back:\n")
	for i, st := range s.RollbackPlan() {
		fmt.Fprintf(w, "  %d. %s\n", len(steps)+i+1, st)
	}
	for _, line := range s.alternativeWarnings() {
		fmt.Fprintln(w, line)
	}
}
