package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

func newVersionCommand(g *globals) *cobra.Command {
	return flagsOnly(spec{"version", "Print the version", "version", printsJSON}, func(cmd *cobra.Command) error {
		if err := g.print(version.Current()); err != nil {
			return failure("version: write output: %w", err)
		}
		return nil
	})
}
