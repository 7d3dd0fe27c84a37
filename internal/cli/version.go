package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

func init() { register(newVersionCommand) }

func newVersionCommand(g *globals) *cobra.Command {
	return flagsOnly("version", "Print the version", "version", func(cmd *cobra.Command) error {
		if err := g.print(version.Current()); err != nil {
			return failure("version: write output: %w", err)
		}
		return nil
	})
}
