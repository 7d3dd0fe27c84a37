package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func init() { register(newSwitchCommand) }

// defaultSwitchTimeout bounds the restart and each wait for kube-proxy: an
// RKE2 server restart plus an image pull on a slow link takes minutes.
const defaultSwitchTimeout = 10 * time.Minute

var switchLong = `switch moves kube-proxy on this node from the backend the plan
(` + hostfs.PlanFile + `) says it uses to BACKEND: it removes stale kube-proxy
rules from BACKEND, records backend: BACKEND in the operator config (in place,
keeping comments; the previous file is kept as ` + hostfs.ConfigFile + switchover.BackupSuffix + `),
restarts RKE2 (rke2-server or rke2-agent, whichever this node runs), waits
up to --timeout for kube-proxy's rules in BACKEND, removes kube-proxy's rules
from the old backend, removes the hint and canary chains the previous kubelet
left in the other iptables backend once the restarted kubelet wrote its own
where BACKEND wants them (kubelet writes them with the host's iptables
alternative: move it first, as verify advises), verifies, and runs the verify
unit again so its result is the switched node's. When a step after the config write fails
it rolls back: the previous config, a restart, a wait for the old backend,
cleanup of BACKEND, verify. Each step is logged to stderr as
[started]/[finished]/[failed]. --dry-run prints the steps and changes nothing.

Exit status: 0 switched (or already on BACKEND); 1 a step failed (rolled back
when the log says so); 2 usage or config error, a backend this host cannot
run, or nftables on an RKE2 release older than the first ones documenting
nftables mode (v1.34.10, v1.35.7, v1.36.3).`

func newSwitchCommand(g *globals) *cobra.Command {
	var (
		to      string
		dryRun  bool
		timeout time.Duration
	)
	cmd := flagsOnly("switch --to BACKEND [--dry-run] [--timeout D]", "Move this node's kube-proxy to another backend, rolling back if verify fails", switchLong, func(cmd *cobra.Command) error {
		if to == "" {
			return usageError(fmt.Errorf("--to is required: one of %s", backend.Names()))
		}
		b, err := backend.Parse(to)
		if err != nil {
			return usageError(fmt.Errorf("--to: %w (switch needs a backend; auto and off are config choices, set them in %s)", err, hostfs.ConfigFile))
		}
		if timeout <= 0 {
			return usageError(fmt.Errorf("--timeout %s: must be positive", timeout))
		}
		s, done, err := prepareSwitch(cmd, g, b, timeout)
		if err != nil || done {
			return err
		}
		if dryRun {
			return printSwitchPlan(g, s)
		}
		if err := s.Run(cmd.Context()); err != nil {
			return failure("switch: %w", err)
		}
		_, err = fmt.Fprintf(g.stdout, "switch: kube-proxy uses %s; no kube-proxy rules left in %s\n", s.To, s.From)
		return err
	})
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "backend to switch to: "+backend.Names()+" (required)")
	f.BoolVar(&dryRun, "dry-run", false, "print the steps and change nothing")
	f.DurationVar(&timeout, "timeout", defaultSwitchTimeout, "bound on the RKE2 restart and on each wait for kube-proxy's rules")
	return cmd
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
	// Every switch restarts RKE2 through systemctl: without it the switch
	// would change the config and then fail its restart and its rollback.
	if _, err := hostfs.LookTool(hostfs.Systemctl, "switch (it restarts RKE2)"); err != nil {
		return nil, false, failure("switch: %w; nothing was changed", err)
	}
	sc := switchover.Systemctl{Timeout: timeout}
	isActive := sc.IsActive
	if !root.IsHost() {
		// Under --root the running systemd belongs to another host: only
		// the fixture's unit files say which unit it runs.
		isActive = func(context.Context, string) bool { return false }
	}
	unit, err := switchover.FindUnit(cmd.Context(), root, isActive)
	if err != nil {
		return nil, false, failure("switch: %w", err)
	}
	var verifyUnit switchover.UnitRerunner
	if root.IsHost() {
		verifyUnit = switchover.VerifyUnitRerunner{Systemctl: sc}
	}
	return &switchover.Switch{
		From:      p.Decision.Backend,
		To:        to,
		Config:    switchover.FileConfig{Root: root, File: g.configFile},
		Restarter: switchover.UnitRestarter{Systemctl: sc, Unit: unit},
		Verifier: switchover.LiveVerifier{
			Root:         root,
			Wait:         timeout,
			ProxyModeURL: verify.ProxyModeEndpoint(root).URL,
			Progress:     func(line string) { fmt.Fprintln(g.stderr, "rke2-proxy-backend: switch: verify: "+line) },
		},
		Cleaner:    switchover.LiveCleaner{},
		Hints:      switchover.LiveHints{},
		VerifyUnit: verifyUnit,
		Log:        g.stderr,
	}, false, nil
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
	fmt.Fprintf(w, "if a step from 3 on fails, roll back:\n")
	for i, st := range s.RollbackPlan() {
		fmt.Fprintf(w, "  %d. %s\n", len(steps)+i+1, st)
	}
	return nil
}
