package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
)

func init() { register(newSwitchCommand) }

// defaultSwitchTimeout bounds the restart and each wait for kube-proxy: an
// RKE2 server restart plus an image pull on a slow link takes minutes.
const defaultSwitchTimeout = 10 * time.Minute

// switchLockWait bounds the wait for an apply holding the node lock (RKE2
// starting); another switch holding it is refused at once.
const switchLockWait = apply.DefaultLockWait

type switchFlags struct {
	to                       string
	dryRun, resume, rollback bool
	timeout                  time.Duration
}

func newSwitchCommand(g *globals) *cobra.Command {
	var fl switchFlags
	cmd := flagsOnly("switch --to BACKEND [--dry-run] [--timeout D] | switch --resume | switch --rollback", "Move this node's kube-proxy to another backend, rolling back if verify fails", helpText("switch"), func(cmd *cobra.Command) error {
		return runSwitch(cmd, g, fl)
	})
	f := cmd.Flags()
	f.StringVar(&fl.to, "to", "", "backend to switch to: "+backend.Names()+" (required without --resume/--rollback)")
	f.BoolVar(&fl.dryRun, "dry-run", false, "print the steps and change nothing")
	f.BoolVar(&fl.resume, "resume", false, "finish the unfinished switch "+hostfs.SwitchJournal+" records")
	f.BoolVar(&fl.rollback, "rollback", false, "undo the unfinished switch "+hostfs.SwitchJournal+" records")
	f.DurationVar(&fl.timeout, "timeout", defaultSwitchTimeout, "bound on the RKE2 restart and on each wait for kube-proxy's rules")
	return cmd
}

func runSwitch(cmd *cobra.Command, g *globals, fl switchFlags) error {
	if fl.resume && fl.rollback {
		return usageError(errors.New("--resume and --rollback: choose one"))
	}
	finishing := fl.resume || fl.rollback
	if finishing && fl.dryRun {
		return usageError(errors.New("--dry-run goes with --to: the journal says what --resume or --rollback would do (" + hostfs.SwitchJournal + ")"))
	}
	var to backend.Backend
	switch {
	case fl.to == "" && !finishing:
		return usageError(fmt.Errorf("--to is required: one of %s (or --resume / --rollback to finish an unfinished switch)", backend.Names()))
	case fl.to != "":
		b, err := backend.Parse(fl.to)
		if err != nil {
			return usageError(fmt.Errorf("--to: %w (switch needs a backend; auto and off are config choices, set them in %s)", err, hostfs.ConfigFile))
		}
		to = b
	}
	if fl.timeout <= 0 {
		return usageError(fmt.Errorf("--timeout %s: must be positive", fl.timeout))
	}
	root := g.hostRoot()
	journal := switchjournal.File{Root: root}
	if fl.dryRun {
		// Read-only: no lock (taking it writes the lock file).
		if j, err := journal.Read(); err != nil {
			return usageError(err)
		} else if j != nil {
			return unfinished(j)
		}
		s, done, err := prepareSwitch(cmd, g, to, fl.timeout)
		if err != nil || done {
			return err
		}
		return printSwitchPlan(g, s)
	}
	if err := ownNetns(root); err != nil {
		return usageError(err)
	}
	if _, err := switchover.SystemctlUnder(root, fl.timeout); err != nil {
		return usageError(err)
	}

	// Signals: the first cancels the switch (Run rolls back), any later one
	// the rollback (it stops where it is, journaled). Installed before the
	// lock so no signal can land between taking it and journaling.
	ctx, cancel := context.WithCancelCause(cmd.Context())
	defer cancel(nil)
	rctx, rcancel := context.WithCancelCause(context.Background())
	defer rcancel(nil)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for sig := range sigs {
			n++
			if n == 1 {
				fmt.Fprintf(g.stderr, "rke2-proxy-backend: switch: %s: stopping; a switch past its config write rolls back (another signal stops the rollback where it is, journaled)\n", sig)
				cancel(fmt.Errorf("interrupted by %s", sig))
				continue
			}
			fmt.Fprintf(g.stderr, "rke2-proxy-backend: switch: %s again: stopping the rollback where it is\n", sig)
			rcancel(fmt.Errorf("interrupted again by %s", sig))
		}
	}()

	lock := &switchover.ApplyLock{Locking: apply.Locking{
		Root: root, DropInPath: dropInPath(root), Wait: switchLockWait,
		Log: func(format string, args ...any) {
			fmt.Fprintf(g.stderr, "rke2-proxy-backend: switch: "+format+"\n", args...)
		},
	}}
	if err := lock.Lock(ctx); err != nil {
		return failure("switch: %w", err)
	}
	defer lock.Unlock()
	j, err := journal.Read()
	if err != nil {
		return usageError(err)
	}
	if j != nil && j.Owner.Alive() {
		return failure("switch: another rke2-proxy-backend switch (pid %d) is moving kube-proxy from %s to %s (%s, step %s, %s): wait for it to finish", j.Owner.PID, j.From, j.To, j.Phase, j.Step, hostfs.SwitchJournal)
	}
	if j != nil && !finishing {
		return unfinished(j)
	}
	if finishing {
		if j == nil {
			_, err := fmt.Fprintf(g.stdout, "switch: no unfinished switch (%s absent): nothing to %s\n", hostfs.SwitchJournal, map[bool]string{true: "resume", false: "roll back"}[fl.resume])
			return err
		}
		if to != "" && to != j.To {
			return usageError(fmt.Errorf("--to %s: the unfinished switch in %s goes to %s: leave out --to, or --rollback it first", to, hostfs.SwitchJournal, j.To))
		}
		s, err := switchFor(cmd, g, j.From, j.To, fl.timeout, journal, lock, rctx)
		if err != nil {
			return err
		}
		if fl.resume {
			err = s.Resume(ctx, j)
		} else {
			err = s.Rollback(ctx, j)
		}
		return switchOutcome(g, s, err, fl.rollback)
	}
	s, done, err := prepareSwitch(cmd, g, to, fl.timeout)
	if err != nil || done {
		return err
	}
	s.Journal, s.Lock, s.RollbackContext = journal, lock, rctx
	return switchOutcome(g, s, s.Run(ctx), false)
}

func switchOutcome(g *globals, s *switchover.Switch, err error, rolledBack bool) error {
	if err != nil {
		return failure("switch: %w", err)
	}
	if rolledBack {
		_, err = fmt.Fprintf(g.stdout, "switch: rolled back: kube-proxy uses %s; the config is the original; no kube-proxy rules left in %s\n", s.From, s.To)
		return err
	}
	_, err = fmt.Fprintf(g.stdout, "switch: kube-proxy uses %s; no kube-proxy rules left in %s\n", s.To, s.From)
	return err
}

// unfinished is the refusal a plain switch gives while a journal waits.
func unfinished(j *switchjournal.Journal) error {
	what := "the switch"
	if j.Phase == switchjournal.PhaseRollback {
		what = "its rollback"
	}
	return failure("switch: an unfinished switch from %s to %s stopped at step %s of %s (%s; its process %d is gone): run `rke2-proxy-backend switch --resume` to finish it, or `rke2-proxy-backend switch --rollback` to undo it; a new switch starts only after",
		j.From, j.To, j.Step, what, hostfs.SwitchJournal, j.Owner.PID)
}

// ownNetns refuses --root in this machine's network namespace: the rules a
// switch reads and removes are the namespace's, and under --root they must
// be the fixture's, not the running host's kube-proxy's. A namespace is
// its own when it is not PID 1's or, where PID 1's cannot be read (a
// sandbox), when it has no interface but loopback, as one made by
// unshare -n; a host's always has more.
func ownNetns(root hostfs.Root) error {
	if root.IsHost() {
		return nil
	}
	self, err1 := os.Readlink("/proc/self/ns/net")
	pid1, err2 := os.Readlink("/proc/1/ns/net")
	if err1 == nil && err2 == nil {
		if self != pid1 {
			return nil
		}
	} else if ifs, err := net.Interfaces(); err == nil && len(ifs) == 1 && ifs[0].Flags&net.FlagLoopback != 0 {
		return nil
	}
	return fmt.Errorf("--root %s: switch under --root reads and removes the rules of the network namespace it runs in, which looks like this machine's (%s): run it in one of its own (unshare -n)", root.Dir(), self)
}

// dropInPath is the RKE2 drop-in whose directory apply locks when /run
// cannot hold the lock file: switch must lock the same one.
func dropInPath(root hostfs.Root) string {
	main := os.Getenv(apply.EnvRKE2Config)
	if main == "" {
		main = facts.Probe(root, facts.Options{}).RKE2.ConfigFile
	}
	if main == "" {
		main = hostfs.RKE2ConfigFile
	}
	return rke2.DropInPath(main)
}

// prepareSwitch checks everything a switch needs before it changes
// anything; done is set when there is nothing to do.
func prepareSwitch(cmd *cobra.Command, g *globals, to backend.Backend, timeout time.Duration) (s *switchover.Switch, done bool, err error) {
	root := g.hostRoot()
	cfg, err := config.Load(root, g.configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return nil, false, usageError(err)
	}
	if cfg.BackendSource == config.SourceEnv || cfg.BackendSource == config.SourceCmdline {
		return nil, false, usageError(fmt.Errorf("backend %s is set by the %s, which overrides %s: a switch recorded in the file would not take effect; remove the override first", cfg.Backend, sourceName(cfg.BackendSource), g.configFile))
	}
	if why := decide.SwitchRefusal(facts.Probe(root, facts.Options{}), to); why != "" {
		return nil, false, usageError(fmt.Errorf("--to %s: %s", to, why))
	}
	p, err := plan.Read(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, failure("switch: no %s: RKE2 has not started with rke2-proxy-backend this boot, so nothing says which backend kube-proxy uses; start RKE2 (or set backend: %s in %s and restart it)", hostfs.PlanFile, to, g.configFile)
	case err != nil:
		return nil, false, failure("switch: %w", err)
	case p.Decision.Disabled:
		return nil, false, failure("switch: %s says rke2-proxy-backend is off (backend: off): set backend: %s in %s and restart RKE2 instead", hostfs.PlanFile, to, g.configFile)
	case p.Decision.Backend == to:
		_, err := fmt.Fprintf(g.stdout, "switch: kube-proxy already uses %s (%s); nothing to do\n", to, hostfs.PlanFile)
		return nil, true, err
	}
	s, err = switchFor(cmd, g, p.Decision.Backend, to, timeout, switchjournal.File{Root: root}, nil, nil)
	return s, false, err
}

// switchFor assembles the switch from one backend to another on this root.
func switchFor(cmd *cobra.Command, g *globals, from, to backend.Backend, timeout time.Duration, j switchjournal.Store, lock switchover.NodeLock, rctx context.Context) (*switchover.Switch, error) {
	root := g.hostRoot()
	// A root without a systemctl still plans (--dry-run); the restart
	// step then fails with the reason, before RKE2 is touched.
	sc, _ := switchover.SystemctlUnder(root, timeout)
	// On the host, a missing systemctl is named with the package to
	// install, before anything changes: the switch could not restart RKE2.
	if root.IsHost() {
		if _, err := hostfs.LookTool(hostfs.Systemctl, "switch (it restarts RKE2)"); err != nil {
			return nil, failure("switch: %w; nothing was changed", err)
		}
	}
	unit, err := switchover.FindUnit(cmd.Context(), root, sc.IsActive)
	if err != nil {
		return nil, failure("switch: %w", err)
	}
	return &switchover.Switch{
		From:      from,
		To:        to,
		Config:    switchover.FileConfig{Root: root, File: g.configFile},
		Restarter: switchover.UnitRestarter{Systemctl: sc, Unit: unit},
		Verifier: switchover.LiveVerifier{
			Root:         root,
			Wait:         timeout,
			ProxyModeURL: kubeproxy.ProxyModeEndpoint(root).URL,
			Progress:     func(line string) { fmt.Fprintln(g.stderr, "rke2-proxy-backend: switch: verify: "+line) },
		},
		Cleaner:         switchover.LiveCleaner{},
		Hints:           switchover.LiveHints{},
		VerifyUnit:      switchover.VerifyUnitRerunner{Systemctl: sc},
		Journal:         j,
		Lock:            lock,
		RollbackContext: rctx,
		Log:             g.stderr,
	}, nil
}

func sourceName(src string) string {
	if src == config.SourceCmdline {
		return "kernel command line (rke2.proxy_backend=)"
	}
	return "environment (RKE2_PROXY_BACKEND)"
}

func printSwitchPlan(g *globals, s *switchover.Switch) error {
	w := g.stdout
	fmt.Fprintf(w, "switch: %s -> %s (dry run: nothing changed)\n", s.From, s.To)
	steps := s.Plan()
	for i, st := range steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, st)
	}
	fmt.Fprintf(w, "if a step from 3 on fails, or a signal comes, roll back:\n")
	for i, st := range s.RollbackPlan() {
		fmt.Fprintf(w, "  %d. %s\n", len(steps)+i+1, st)
	}
	return nil
}
