package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
)

func init() { register(newCleanupCommand) }

func newCleanupCommand(g *globals) *cobra.Command {
	var (
		backendName                 string
		dryRun, force, kubeletHints bool
	)
	cmd := flagsOnly("cleanup --backend B [--dry-run] [--force] | cleanup --kubelet-hints [--dry-run]", "Remove kube-proxy rules stranded in backend B, or kubelet's leftover hint chains", helpText("cleanup"), func(cmd *cobra.Command) error {
		if kubeletHints {
			if backendName != "" || force {
				return usageError(errors.New("--kubelet-hints takes neither --backend nor --force: the plan says where kubelet's hints belong"))
			}
			return cleanupKubeletHints(cmd, g, dryRun)
		}
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
	f.BoolVar(&kubeletHints, "kubelet-hints", false, "remove kubelet's leftover hint chains from the other iptables backend instead (no reboot needed)")
	return cmd
}

// cleanupKubeletHints is `cleanup --kubelet-hints`: switch's own tidy step
// (switchover.LiveHints), for the leftovers of a switch done another way
// (config edit and restart, a one-boot override made permanent).
func cleanupKubeletHints(cmd *cobra.Command, g *globals, dryRun bool) error {
	p, err := plan.Read(g.hostRoot())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure("cleanup --kubelet-hints: no plan at %s: nothing says which backend kube-proxy uses, so nothing says where kubelet's hints belong (let RKE2 start once, or run rke2-proxy-backend apply)", hostfs.PlanFile)
	case err != nil:
		return failure("cleanup --kubelet-hints: %w", err)
	case p.Decision.Disabled:
		return failure("cleanup --kubelet-hints: rke2-proxy-backend is turned off (backend: off): nothing says where kubelet's hints belong")
	}
	run := cleanup.Exec
	if dryRun {
		run = dryRunner
	}
	t, err := switchover.LiveHints{Run: run}.Tidy(cmd.Context(), p.Decision.Backend)
	if err != nil {
		return failure("cleanup --kubelet-hints: %w", err)
	}
	return printHintTidy(g, p.Decision.Backend, t, dryRun)
}

// dryRunner reads as cleanup.Exec does and loads nothing: every change
// goes through an *-restore, which it only pretends to run.
func dryRunner(ctx context.Context, stdin string, argv ...string) (string, error) {
	if strings.HasSuffix(argv[0], "-restore") {
		return "", nil
	}
	return cleanup.Exec(ctx, stdin, argv...)
}

func printHintTidy(g *globals, kubeProxy backend.Backend, t *switchover.HintTidy, dryRun bool) error {
	if g.json() {
		out := struct {
			*switchover.HintTidy
			KubeProxy backend.Backend `json:"kube_proxy"`
			DryRun    bool            `json:"dry_run"`
		}{t, kubeProxy, dryRun}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return failure("cleanup: encode output: %w", err)
		}
		_, err = fmt.Fprintf(g.stdout, "%s\n", b)
		return err
	}
	p := &linePrinter{w: g.stdout}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	p.f("cleanup: kubelet's hints belong in %s for kube-proxy's %s; kubelet wrote its own there for: %s\n", t.Want, kubeProxy, familiesText(t.Written))
	if len(t.Removed) == 0 {
		p.f("cleanup: no leftover kubelet chain to remove\n")
	} else {
		p.f("cleanup: %s %d leftover kubelet chain(s):\n", verb, len(t.Removed))
		for _, r := range t.Removed {
			p.f("  %s\n", r)
		}
	}
	for _, l := range t.Left {
		p.f("kept: %s\n", l)
	}
	return p.err
}

func familiesText(fams []rules.Family) string {
	if len(fams) == 0 {
		return "no family yet"
	}
	var s []string
	for _, f := range fams {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// linePrinter keeps the first write error so the report stays linear.
type linePrinter struct {
	w   io.Writer
	err error
}

func (p *linePrinter) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
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
