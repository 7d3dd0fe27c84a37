package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/plan"
)

func init() { register(newCleanupCommand) }

const cleanupLong = `cleanup removes kube-proxy's chains, rules and tables from backend B only:
for iptables-legacy and iptables-nft the KUBE-* chains kube-proxy owns and the
built-in-chain jumps into them, in one iptables-restore --noflush transaction
per family; for nftables the tables ip and ip6 kube-proxy. kubelet's chains
(KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY, KUBE-FIREWALL) and everything else
stay. It prints each object it removes. --dry-run prints them and changes
nothing. It refuses the backend the plan (` + hostfs.PlanFile + `) says kube-proxy
uses, unless --force.`

func newCleanupCommand(g *globals) *cobra.Command {
	var (
		backendName   string
		dryRun, force bool
	)
	cmd := flagsOnly("cleanup --backend B [--dry-run] [--force]", "Remove kube-proxy rules stranded in backend B", cleanupLong, func(cmd *cobra.Command) error {
		b, err := backendFlag("--backend", backendName, true)
		if err != nil {
			return usageError(err)
		}
		p, err := plan.Read(g.hostRoot())
		switch {
		case err == nil && !p.Decision.Disabled && p.Decision.Backend == b && !force:
			return failure("cleanup: kube-proxy uses %s according to %s; refusing to remove its live rules (use --force to do it anyway; kube-proxy rebuilds them when it restarts)", b, hostfs.PlanFile)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return failure("cleanup: %w", err)
		}
		ctx := cmd.Context()
		live, err := cleanup.Read(ctx, cleanup.Exec, b)
		if err != nil {
			return failure("cleanup: %w", err)
		}
		cp := cleanup.Compute(live)
		if !dryRun && !cp.Empty() {
			if err := cleanup.Apply(ctx, cleanup.Exec, cp); err != nil {
				return failure("cleanup: %w", err)
			}
		}
		return printCleanup(g, cp, dryRun)
	})
	f := cmd.Flags()
	f.StringVar(&backendName, "backend", "", "backend to clean: "+backend.Names()+" (required)")
	f.BoolVar(&dryRun, "dry-run", false, "print what would be removed and change nothing")
	f.BoolVar(&force, "force", false, "also clean the backend the plan says kube-proxy uses")
	return cmd
}

func printCleanup(g *globals, p *cleanup.Plan, dryRun bool) error {
	if g.json() {
		out := struct {
			*cleanup.Plan
			DryRun bool `json:"dry_run"`
		}{p, dryRun}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return failure("cleanup: encode output: %w", err)
		}
		_, err = fmt.Fprintf(g.stdout, "%s\n", b)
		return err
	}
	if p.Empty() {
		_, err := fmt.Fprintf(g.stdout, "cleanup: no kube-proxy rules in %s; nothing to remove\n", p.Backend)
		return err
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	if _, err := fmt.Fprintf(g.stdout, "cleanup: %s %d kube-proxy object(s) from %s:\n", verb, len(p.Removals), p.Backend); err != nil {
		return err
	}
	for _, r := range p.Removals {
		if _, err := fmt.Fprintf(g.stdout, "  %s\n", r); err != nil {
			return err
		}
	}
	return nil
}
