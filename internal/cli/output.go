package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// jsonCommands says, for every command by its path without the program
// name, whether it prints a JSON document with -o json. A command without
// one refuses -o json (exit 2): silently printing text to a script that
// asked for JSON is worse than saying no. TestEveryCommandDeclaresItsOutput
// fails until a new command is listed here.
var jsonCommands = map[string]bool{
	"detect":          true,
	"version":         true,
	"verify":          true,
	"cleanup":         true,
	"render expected": true,
	"render live":     true,
	"bench":           true,
	"adopt":           true,

	"apply":                 false, // logs to stderr; the plan file is its record
	"render":                false, // only says which subcommand to use
	"generate":              false, // writes drop-ins, logs to the journal
	"check":                 false, // node-problem-detector's one-line protocol
	"switch":                true,  // its lines and the ipvs translation report; steps go to stderr
	"watch":                 false, // a service: logs drift to the journal, status.json is its record
	"help":                  false,
	"completion bash":       false,
	"completion zsh":        false,
	"completion fish":       false,
	"completion powershell": false,
}

// CommandKey is a command's path without the program name ("render live"),
// as jsonCommands and the manual pages name commands.
func CommandKey(cmd *cobra.Command) string {
	_, key, _ := strings.Cut(cmd.CommandPath(), " ")
	return key
}

// noJSONHints say where a text-only command's information is found as JSON.
var noJSONHints = map[string]string{
	"apply": "run `rke2-proxy-backend detect -o json` for the decision, or read " + hostfs.PlanFile + " after apply",
	"check": "read " + hostfs.StatusFile + ", which is verify's result as JSON",
}

// checkOutput refuses an unknown format, and -o json for a command with no
// JSON form, in one wording for every command.
func (g *globals) checkOutput(cmd *cobra.Command) error {
	if g.output != "text" && g.output != "json" {
		return usageError(fmt.Errorf("--output %q: valid formats are text, json", g.output))
	}
	key := CommandKey(cmd)
	if !g.json() || jsonCommands[key] {
		return nil
	}
	hint, ok := noJSONHints[key]
	if !ok {
		hint = "run it without -o json"
	}
	return usageError(fmt.Errorf("%s has no JSON output (--output json): %s", key, hint))
}

// result is what a command prints: with -o json itself, as the indented
// document every JSON command prints; else its Text.
type result interface{ Text() string }

func (g *globals) print(r result) error {
	if !g.json() {
		_, err := io.WriteString(g.stdout, r.Text())
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	_, err = g.stdout.Write(append(b, '\n'))
	return err
}
