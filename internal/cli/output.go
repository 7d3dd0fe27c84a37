package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// jsonCommands says, for every command by its path without the program
// name, whether it prints a JSON document with -o json. A command without
// one refuses -o json (exit 2): silently printing text to a script that
// asked for JSON is worse than saying no. TestEveryCommandDeclaresItsOutput
// fails until a new command is listed here.
var jsonCommands = map[string]bool{
	"detect":          true,
	"version":         true,
	"apply":           true, // apply --dry-run prints the plan it would record
	"verify":          true,
	"cleanup":         true,
	"render expected": true,
	"render live":     true,

	"render":                false, // only says which subcommand to use
	"generate":              false, // writes drop-ins, logs to the journal
	"help":                  false,
	"completion bash":       false,
	"completion zsh":        false,
	"completion fish":       false,
	"completion powershell": false,
}

// commandKey is a command's path without the program name ("render live").
func commandKey(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	if p := commandKey(cmd.Parent()); p != "" {
		return p + " " + cmd.Name()
	}
	return cmd.Name()
}

// checkOutput refuses -o json for a command with no JSON form.
func (g *globals) checkOutput(cmd *cobra.Command) error {
	if !g.json() || jsonCommands[commandKey(cmd)] {
		return nil
	}
	return usageError(fmt.Errorf("-o json: %q has no JSON output; run it without -o json", cmd.CommandPath()))
}
