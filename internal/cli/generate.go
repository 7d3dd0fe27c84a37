package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
)

func init() { register(newGenerateCommand) }

func newGenerateCommand(g *globals) *cobra.Command {
	return withHelp(&cobra.Command{
		Use:   "generate NORMAL [EARLY [LATE]]",
		Short: "Run as the systemd generator: write drop-ins for rke2-server/rke2-agent",
		Args:  cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			generator.OnHost(g.hostRoot(), g.configFile, g.distro, dirs, g.stderr)
			return nil
		},
	}, "generate")
}
