package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
)

func newCleanupCommand(g *globals) *cobra.Command {
	var (
		backendName                               string
		dryRun, force, kubeletHints, ipvsLeftover bool
	)
	cmd := flagsOnly(spec{"cleanup --backend B [--dry-run] [--force] | cleanup --kubelet-hints [--dry-run] | cleanup --ipvs-leftovers [--dry-run] [--force]", "Remove kube-proxy rules (on k3s also flannel's and kube-router's) stranded in backend B, kubelet's leftover hint chains, or ipvs mode's leftovers", "cleanup", printsJSON}, func(cmd *cobra.Command) error {
		var b backend.Backend
		switch {
		case ipvsLeftover && (backendName != "" || kubeletHints):
			return usageError(errors.New("--ipvs-leftovers takes neither --backend nor --kubelet-hints: it removes only ipvs's own state"))
		case kubeletHints && (backendName != "" || force):
			return usageError(errors.New("--kubelet-hints takes neither --backend nor --force: the plan says where kubelet's hints belong"))
		case !ipvsLeftover && !kubeletHints:
			var err error
			if b, err = backendFlag("--backend", backendName, true); err != nil {
				return usageError(err)
			}
		}
		// A cleanup that removes runs under the node lock, never beside a
		// switch or an apply: the plan it trusts stays the plan.
		if !dryRun {
			release, err := switchover.HoldNode(cmd.Context(), g.hostRoot(), g.host().Distribution, "cleanup", g.logf("cleanup"))
			if err != nil {
				return failure("cleanup: %w", err)
			}
			defer release()
		}
		// What it removed may be all verify failed on: say so, and let the
		// verify unit know.
		reverify := func(removed bool) *cleanup.Reverified {
			if dryRun || !removed {
				return nil
			}
			return switchover.Reverify(cmd.Context(), g.hostRoot(), g.configFile, g.host().Distribution)
		}
		switch {
		case ipvsLeftover:
			sw, err := cleanup.IPVSLeftovers(cmd.Context(), g.hostRoot(), cleanup.Options{DryRun: dryRun, Force: force, Distribution: g.host().Distribution})
			if err != nil {
				return failure("cleanup --ipvs-leftovers: %w", err)
			}
			return g.print(sw)
		case kubeletHints:
			r, err := switchover.TidyPlannedHints(cmd.Context(), g.hostRoot(), g.host().Distribution, dryRun)
			if err != nil {
				return failure("cleanup --kubelet-hints: %w", err)
			}
			r.Verify = reverify(len(r.Removed) > 0)
			return g.print(r)
		}
		p, err := cleanup.Stranded(cmd.Context(), g.hostRoot(), b, cleanup.Options{Force: force, DryRun: dryRun, Distribution: g.host().Distribution})
		if err != nil {
			return failure("cleanup: %w", err)
		}
		return g.print(cleanup.Result{Plan: p, DryRun: dryRun, Verify: reverify(!p.Empty())})
	})
	f := cmd.Flags()
	f.StringVar(&backendName, "backend", "", "backend to clean: "+backend.Names()+" (required)")
	f.BoolVar(&dryRun, "dry-run", false, "print what would be removed and change nothing")
	f.BoolVar(&force, "force", false, "also clean the backend the plan says kube-proxy uses")
	f.BoolVar(&kubeletHints, "kubelet-hints", false, "remove kubelet's leftover hint chains from the other iptables backend instead (no reboot needed)")
	f.BoolVar(&ipvsLeftover, "ipvs-leftovers", false, "remove what ipvs mode left once kube-proxy is out of it instead: its ipsets no rule uses, a dummy kube-ipvs0, the virtual servers on it (--force: even while the plan records ipvs)")
	return cmd
}
