package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func newApplyCommand(g *globals) *cobra.Command {
	var (
		name string
		o    apply.PrepareOptions
	)
	// apply logs to stderr; the plan file is its record.
	noJSON := "run `rke2-proxy-backend detect -o json` for the decision, or read " + hostfs.PlanFile + " after apply"
	cmd := flagsOnly(spec{"apply [--backend B] [--dry-run]", "Prepare the node for the backend and tell RKE2 (ExecStartPre of rke2-server/rke2-agent)", "apply", noJSON}, func(cmd *cobra.Command) error { return runApply(cmd, g, name, o) })
	f := cmd.Flags()
	f.StringVar(&name, "backend", "", "backend to apply (the generator passes its decision); default: decide now. One of "+backend.Names())
	f.BoolVar(&o.DryRun, "dry-run", false, "print the drop-in and the modules to load; write and load nothing")
	f.StringVar(&o.Modprobe, "modprobe", "", "modprobe's path under --root (default "+hostfs.Modprobe+")")
	f.BoolVar(&o.NoTrial, "no-trial", false, "skip the trial load (for bench/apply.sh, which times apply with and without it)")
	f.StringVar(&o.Systemctl, "systemctl", "", "systemctl's path (tests)")
	f.BoolVar(&o.TrialUnderRoot, "trial-under-root", false, "run the trial under --root too, on this machine's kernel (tests of the trial's handling, bench/apply.sh)")
	for _, test := range []string{"modprobe", "no-trial", "systemctl", "trial-under-root"} {
		_ = f.MarkHidden(test) // for tests and bench/apply.sh
	}
	return cmd
}

// runApply maps apply.OnHost to exit codes: a config it cannot read is a
// usage error (2), a blocked run a failure (1), honoured or warned 0.
func runApply(cmd *cobra.Command, g *globals, name string, o apply.PrepareOptions) error {
	forced, err := backendFlag("--backend", name, false)
	if err != nil {
		return usageError(err)
	}
	o.Forced, o.Stdout, o.Log = forced, g.stdout, g.logf("apply")
	out, err := apply.OnHost(cmd.Context(), g.host(), o)
	if err != nil {
		return usageError(err)
	}
	if out.Verdict == apply.Blocked {
		return failure("%s", out.Message)
	}
	return nil
}
