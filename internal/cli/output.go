package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// A command's output with -o json, as its spec declares it: printsJSON is
// one JSON document; anything else is a text-only command's hint at where
// its information is found as JSON, and the command refuses -o json
// (exit 2): silently printing text to a script that asked for JSON is worse
// than saying no. cobra's own help and completion commands declare nothing
// and refuse it as textOnly. TestEveryCommandDeclaresItsOutput fails for a
// command of ours that declares nothing.
const (
	printsJSON = "json"
	textOnly   = "run it without -o json"
)

// CommandKey is a command's path without the program name ("render live"),
// as errors and the manual pages name commands.
func CommandKey(cmd *cobra.Command) string {
	_, key, _ := strings.Cut(cmd.CommandPath(), " ")
	return key
}

// checkOutput refuses an unknown format, and -o json for a command with no
// JSON form, in one wording for every command.
func (g *globals) checkOutput(cmd *cobra.Command) error {
	if g.output != "text" && g.output != "json" {
		return usageError(fmt.Errorf("--output %q: valid formats are text, json", g.output))
	}
	out := cmd.Annotations[jsonOutput]
	if !g.json() || out == printsJSON {
		return nil
	}
	if out == "" {
		out = textOnly
	}
	return usageError(fmt.Errorf("%s has no JSON output (--output json): %s", CommandKey(cmd), out))
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
