package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/detectreport"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts/live"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

func newDetectCommand(g *globals) *cobra.Command {
	var kernelRelease string
	cmd := flagsOnly(spec{"detect", "Show the host facts, the backend decision and its reasons", "detect", printsJSON}, func(cmd *cobra.Command) error {
		if why := facts.CheckRelease(kernelRelease); kernelRelease != "" && why != "" {
			return usageError(fmt.Errorf("--kernel-release %q: %s", kernelRelease, why))
		}
		h := g.host()
		h.KernelRelease = kernelRelease
		probe := hostplan.Detect
		probe.Live = live.Read
		p, err := hostplan.Load(h, probe)
		if err != nil {
			return usageError(err)
		}
		rep, err := detectreport.New(p)
		if err != nil {
			return failure("%w", err)
		}
		if err := rep.Write(g.stdout, g.json()); err != nil {
			return failure("write output: %w", err)
		}
		if u := p.Facts.Unreadable; len(u) > 0 {
			return usageError(errors.New("some host sources exist but cannot be read, so the decision may rest on a guess:\n  " + strings.Join(u, "\n  ")))
		}
		return nil
	})
	cmd.Flags().StringVar(&kernelRelease, "kernel-release", "", "judge this kernel release (one under /lib/modules) instead of the running kernel, or on an image root the newest one installed")
	return cmd
}
