package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
)

func newSwitchCommand(g *globals) *cobra.Command {
	var r switchover.Request
	// switch prints its lines and the ipvs translation report (one JSON
	// document with -o json); its steps go to stderr.
	cmd := flagsOnly(spec{"switch --to BACKEND [--dry-run] [--timeout D] | switch --resume | switch --rollback", "Move this node's kube-proxy to another backend, rolling back if verify fails", "switch", printsJSON}, func(cmd *cobra.Command) error {
		r.Root, r.ConfigFile, r.Out, r.Log, r.JSON, r.Distribution = g.hostRoot(), g.configFile, g.stdout, g.stderr, g.json(), g.distro
		err := switchover.Do(cmd.Context(), r)
		var bad *switchover.UsageError
		switch {
		case errors.As(err, &bad):
			return usageError(err)
		case err != nil:
			return failure("switch: %w", err)
		}
		return nil
	})
	f := cmd.Flags()
	f.StringVar(&r.To, "to", "", "backend to switch to: "+backend.Names()+" (required without --resume/--rollback)")
	f.BoolVar(&r.DryRun, "dry-run", false, "print the steps and change nothing")
	f.BoolVar(&r.Resume, "resume", false, "finish the unfinished switch "+hostfs.SwitchJournal+" records")
	f.BoolVar(&r.Rollback, "rollback", false, "undo the unfinished switch "+hostfs.SwitchJournal+" records")
	f.DurationVar(&r.Timeout, "timeout", switchover.DefaultTimeout, "bound on the RKE2 restart and on each wait for kube-proxy's rules")
	return cmd
}
