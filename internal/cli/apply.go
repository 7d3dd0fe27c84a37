package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

func init() { register(newApplyCommand) }

type applyFlags struct {
	backend  string
	dryRun   bool
	modprobe string
	// noTrial skips the trial load, for bench/apply.sh's pairs only.
	noTrial bool
	// systemctl is systemctl's path (tests).
	systemctl string
	// trialUnderRoot runs the trial under --root anyway, on this machine's
	// kernel and loaders: for the tests of what apply does with a trial's
	// verdict, and bench/apply.sh's timing.
	trialUnderRoot bool
}

func newApplyCommand(g *globals) *cobra.Command {
	var fl applyFlags
	cmd := flagsOnly("apply [--backend B] [--dry-run]", "Prepare the node for the backend and tell RKE2 (ExecStartPre of rke2-server/rke2-agent)", helpText("apply"), func(cmd *cobra.Command) error { return runApply(cmd, g, fl) })
	f := cmd.Flags()
	f.StringVar(&fl.backend, "backend", "", "backend to apply (the generator passes its decision); default: decide now. One of "+backend.Names())
	f.BoolVar(&fl.dryRun, "dry-run", false, "print the drop-in and the modules to load; write and load nothing")
	f.StringVar(&fl.modprobe, "modprobe", "", "modprobe's path under --root (default "+hostfs.Modprobe+")")
	_ = f.MarkHidden("modprobe")
	f.BoolVar(&fl.noTrial, "no-trial", false, "skip the trial load (for bench/apply.sh, which times apply with and without it)")
	_ = f.MarkHidden("no-trial")
	f.StringVar(&fl.systemctl, "systemctl", "", "systemctl's path (tests)")
	_ = f.MarkHidden("systemctl")
	f.BoolVar(&fl.trialUnderRoot, "trial-under-root", false, "run the trial under --root too, on this machine's kernel (tests of the trial's handling, bench/apply.sh)")
	_ = f.MarkHidden("trial-under-root")
	return cmd
}

func runApply(cmd *cobra.Command, g *globals, fl applyFlags) error {
	forced, err := backendFlag("--backend", fl.backend, false)
	if err != nil {
		return usageError(err)
	}
	f, cfg, d, err := g.loadDecision(facts.Options{RKE2Binary: true, ToolVersions: true, AskNft: true})
	if err != nil {
		// The operator's intent is unknown: neither a fresh decision nor
		// the drop-in an earlier boot left may stand in for it.
		return usageError(fmt.Errorf("%w; RKE2 will not start until this is fixed (the operator's intent is unknown, so %s from an earlier boot is not used); check with `rke2-proxy-backend detect`",
			err, rke2.DropInName))
	}
	out, err := apply.Prepare(cmd.Context(), apply.PrepareOptions{
		Root: g.hostRoot(), Forced: forced, ConfigEnv: os.Getenv(apply.EnvRKE2Config),
		DryRun: fl.dryRun, Modprobe: fl.modprobe, Systemctl: fl.systemctl,
		NoTrial: fl.noTrial, TrialUnderRoot: fl.trialUnderRoot,
		Stdout: g.stdout,
		Log: func(format string, args ...any) {
			fmt.Fprintf(g.stderr, "rke2-proxy-backend apply: "+format+"\n", args...)
		},
	}, apply.Input{Facts: f, Config: cfg, Decision: d})
	if err != nil {
		return usageError(err)
	}
	if out.Verdict == apply.Blocked {
		return failure("%s", out.Message)
	}
	return nil
}
