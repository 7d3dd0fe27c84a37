package cli

import (
	"encoding/json"
	"fmt"

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

func newVersionCommand(g *globals) *cobra.Command {
	return flagsOnly("version", "Print the version", helpText("version"), func(cmd *cobra.Command) error {
		var err error
		if g.json() {
			enc := json.NewEncoder(g.stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(versionOutput{Schema: 1, Name: "rke2-proxy-backend", Version: version.Version})
		} else {
			_, err = fmt.Fprintln(g.stdout, "rke2-proxy-backend "+version.Version)
		}
		if err != nil {
			return failure("version: write output: %w", err)
		}
		return nil
	})
}
