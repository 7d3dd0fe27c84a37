package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

func init() { register(newVersionCommand) }

// versionOutput is version's JSON document; schema counts incompatible
// changes to it, as in detect's.
type versionOutput struct {
	Schema  int    `json:"schema"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (v versionOutput) Text() string { return v.Name + " " + v.Version + "\n" }

func newVersionCommand(g *globals) *cobra.Command {
	return flagsOnly("version", "Print the version", helpText("version"), func(cmd *cobra.Command) error {
		if err := g.print(versionOutput{Schema: 1, Name: "rke2-proxy-backend", Version: version.Version}); err != nil {
			return failure("version: write output: %w", err)
		}
		return nil
	})
}
