package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
)

func newGenerateCommand(g *globals) *cobra.Command {
	// generate writes drop-ins and logs to the journal.
	s := spec{"generate NORMAL [EARLY [LATE]]", "Run as the systemd generator: write drop-ins for rke2-server/rke2-agent", "generate", textOnly}
	return declare(&cobra.Command{
		Use:   s.use,
		Short: s.short,
		Args:  cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			generator.OnHost(g.hostRoot(), g.configFile, g.distro, dirs, g.stderr)
			return nil
		},
	}, s)
}
