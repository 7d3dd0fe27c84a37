package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/detectreport"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

func newDetectCommand(g *globals) *cobra.Command {
	return flagsOnly(spec{"detect", "Show the host facts, the backend decision and its reasons", "detect", printsJSON}, func(cmd *cobra.Command) error {
		p, err := hostplan.Load(g.host(), hostplan.Detect)
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
}
