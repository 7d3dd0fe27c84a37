package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
)

func init() { register(newGenerateCommand) }

func newGenerateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "generate NORMAL [EARLY [LATE]]",
		Short: "Run as the systemd generator: write drop-ins for rke2-server/rke2-agent",
		Long:  helpText("generate"),
		Args:  cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			runGenerator(g, dirs)
			return nil
		},
	}
}

// runGenerator decides and writes the drop-ins into dirs (NORMAL [EARLY
// [LATE]]); the outcome is logged, and a generator exits 0 whatever happened.
func runGenerator(g *globals, dirs []string) {
	root := g.hostRoot()
	log := generator.OpenLogger(root.IsHost(), g.stderr)
	defer log.Close()
	_, _ = generator.Run(generator.Options{
		Root: root, Dirs: dirs, Getenv: os.Getenv, Environ: os.Environ(), ConfigFile: g.configFile,
		Binary: generator.InstalledBinary(root, os.Executable), Log: log,
	})
}
