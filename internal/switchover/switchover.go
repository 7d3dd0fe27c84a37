// Package switchover moves one node's kube-proxy from one backend to
// another: record the choice, restart RKE2, wait for kube-proxy's rules in
// the new backend, remove the old backend's, verify, and roll back to the
// old backend when any of that fails. The steps talk to the host through
// four small interfaces so a test can drive every path; the real ones are
// in config.go, systemd.go and netfilter.go.
package switchover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// ConfigWriter records the backend in the operator config and can put the
// previous content back.
type ConfigWriter interface {
	// Set records b and returns what the file held before.
	Set(b backend.Backend) (Snapshot, error)
	Restore(Snapshot) error
	// Describe names the file (and its backup) for the log.
	Describe() string
}

// Restarter restarts RKE2, whose ExecStartPre (apply) reads the config and
// points kube-proxy at the recorded backend.
type Restarter interface {
	Restart(ctx context.Context) error
	Describe() string
}

// Verifier runs verify expecting backend b, waiting for kube-proxy's sync.
type Verifier interface {
	Verify(ctx context.Context, b backend.Backend) (*verify.Result, error)
}

// Cleaner removes kube-proxy's rules from backend b.
type Cleaner interface {
	Clean(ctx context.Context, b backend.Backend) (*cleanup.Plan, error)
}

// UnitRerunner runs the verify unit again, so its last result (and so
// `systemctl --failed`) is the switched node's, not the one it judged
// while the restart was still moving rules.
type UnitRerunner interface {
	Rerun(ctx context.Context) error
	Describe() string
}

// Snapshot is the operator config before a switch.
type Snapshot struct {
	Existed bool
	Data    []byte
}

// Switch is one switch on one node.
type Switch struct {
	From, To  backend.Backend
	Config    ConfigWriter
	Restarter Restarter
	Verifier  Verifier
	Cleaner   Cleaner
	Hints     HintTidier
	// VerifyUnit, when set, is re-run last (nil under --root, where the
	// running systemd is not the fixture's).
	VerifyUnit UnitRerunner
	// Log gets one [started]/[finished]/[failed] line per step.
	Log io.Writer
}

// ErrRolledBack is wrapped by Run's error when the switch failed and the
// node is back on the old backend, verified.
var ErrRolledBack = errors.New("switch failed; rolled back to the previous backend")

// Plan lists the steps Run takes, for --dry-run and the log.
func (s *Switch) Plan() []string {
	steps := []string{
		fmt.Sprintf("remove stale kube-proxy rules from %s (kube-proxy uses %s until the restart)", s.To, s.From),
		fmt.Sprintf("record backend: %s in %s", s.To, s.Config.Describe()),
		"restart " + s.Restarter.Describe(),
		fmt.Sprintf("wait for kube-proxy's rules in %s", s.To),
		fmt.Sprintf("remove kube-proxy's rules from %s", s.From),
		s.hintStep(s.To),
		fmt.Sprintf("verify: kube-proxy complete in %s, nothing stranded", s.To),
	}
	if s.VerifyUnit != nil {
		steps = append(steps, s.rerunStep())
	}
	return steps
}

func (s *Switch) hintStep(b backend.Backend) string {
	return fmt.Sprintf("remove kubelet's hint and canary chains from the other iptables backend once kubelet wrote them in %s", verify.HintBackend(b))
}

func (s *Switch) rerunStep() string {
	return "run " + s.VerifyUnit.Describe() + " again (its run during the restart saw the old backend's rules)"
}

// RollbackPlan lists what Run does when a step after the config write fails.
func (s *Switch) RollbackPlan() []string {
	steps := []string{
		"restore the previous " + s.Config.Describe(),
		"restart " + s.Restarter.Describe(),
		fmt.Sprintf("wait for kube-proxy's rules in %s", s.From),
		fmt.Sprintf("remove kube-proxy's rules from %s", s.To),
		fmt.Sprintf("verify: kube-proxy complete in %s, nothing stranded", s.From),
	}
	if s.VerifyUnit != nil {
		steps = append(steps, s.rerunStep())
	}
	return steps
}

// Run switches the node. On a failure after the config was written it
// rolls back; the error then wraps ErrRolledBack when the rollback held,
// and says the node needs a hand when it did not.
func (s *Switch) Run(ctx context.Context) error {
	l := &logger{w: s.Log}
	plan := s.Plan()
	if err := l.step(plan[0], func() error { return s.clean(ctx, s.To) }); err != nil {
		return fmt.Errorf("nothing changed: %w", err)
	}
	var snap Snapshot
	if err := l.step(plan[1], func() (err error) { snap, err = s.Config.Set(s.To); return err }); err != nil {
		return fmt.Errorf("nothing changed: %w", err)
	}
	err := l.steps(plan[2:7],
		func() error { return s.Restarter.Restart(ctx) },
		func() error { return s.waitSynced(ctx, s.To) },
		func() error { return s.clean(ctx, s.From) },
		func() error { return s.tidyHints(ctx, l, s.To) },
		func() error { return s.verifyOK(ctx, l, s.To) })
	if err == nil {
		if s.VerifyUnit != nil {
			l.step(plan[7], func() error { s.rerunUnit(ctx, l); return nil })
		}
		return nil
	}
	// A cancelled context (the operator's Ctrl-C, SUC's deadline) still
	// deserves the rollback: give it a context of its own.
	rctx := context.WithoutCancel(ctx)
	rb := s.RollbackPlan()
	l.note(fmt.Sprintf("rolling back to %s", s.From))
	rerr := l.steps(rb[0:5],
		func() error { return s.Config.Restore(snap) },
		func() error { return s.Restarter.Restart(rctx) },
		func() error { return s.waitSynced(rctx, s.From) },
		func() error { return s.clean(rctx, s.To) },
		func() error { return s.verifyOK(rctx, l, s.From) })
	if rerr == nil && s.VerifyUnit != nil {
		l.step(rb[5], func() error { s.rerunUnit(rctx, l); return nil })
	}
	if rerr != nil {
		return fmt.Errorf("switch to %s failed (%w) and so did the rollback to %s (%v): the node needs a hand: run rke2-proxy-backend verify and read its fixes", s.To, err, s.From, rerr)
	}
	return fmt.Errorf("%w: %s: %w", ErrRolledBack, s.From, err)
}

func (s *Switch) clean(ctx context.Context, b backend.Backend) error {
	p, err := s.Cleaner.Clean(ctx, b)
	if err != nil {
		return err
	}
	if len(p.Removals) > 0 {
		fmt.Fprintf(s.Log, "rke2-proxy-backend: switch:   removed %d kube-proxy object(s) from %s\n", len(p.Removals), b)
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

// verifyOK is verify's whole verdict.
func (s *Switch) verifyOK(ctx context.Context, l *logger, b backend.Backend) error {
	res, err := s.Verifier.Verify(ctx, b)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		l.note(fmt.Sprintf("warning: %s (fix: %s)", w.Message, w.Fix))
	}
	if !res.OK {
		return fmt.Errorf("verify %s: %s", res.Verdict, findings(res.Findings))
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

func (l *logger) note(s string) {
	fmt.Fprintf(l.w, "rke2-proxy-backend: switch: %s\n", s)
}
