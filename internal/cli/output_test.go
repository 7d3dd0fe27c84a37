package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// everyCommand walks the tree as a user meets it, cobra's own help and
// completion commands included.
func everyCommand(t *testing.T) []*cobra.Command {
	t.Helper()
	root := NewRootCommand(io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() && c.Runnable() {
			out = append(out, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

func TestEveryCommandDeclaresItsOutput(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range everyCommand(t) {
		key := CommandKey(c)
		seen[key] = true
		if c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			continue // parses no flags of its own: -o reaches it as a word to complete
		}
		if _, ok := jsonCommands[key]; !ok {
			t.Errorf("%q is not in jsonCommands: say whether it prints JSON with -o json", key)
		}
	}
	for key := range jsonCommands {
		if !seen[key] {
			t.Errorf("jsonCommands lists %q, which the command tree does not have", key)
		}
	}
}

// TestTextOnlyCommandsRefuseJSON runs each text-only command with -o json:
// exit 2, one line naming the command, nothing on stdout.
func TestTextOnlyCommandsRefuseJSON(t *testing.T) {
	h := testhost.New(t).Debian12()
	for key, hasJSON := range jsonCommands {
		if hasJSON {
			continue
		}
		t.Run(key, func(t *testing.T) {
			args := append([]string{"rke2-proxy-backend", "--root", h.Dir(), "-o", "json"}, splitKey(key)...)
			if key == "generate" {
				args = append(args, t.TempDir())
			}
			var stdout, stderr bytes.Buffer
			code := Main(args, &stdout, &stderr)
			hint := "run it without -o json"
			if h, ok := noJSONHints[key]; ok {
				hint = h
			}
			want := "rke2-proxy-backend: " + key + " has no JSON output (--output json): " + hint + "\n"
			if code != ExitUsage || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2, stderr %q, no stdout", code, stderr.String(), stdout.String(), want)
			}
		})
	}
}

// TestJSONCommandsPrintJSON runs the JSON commands that need no live
// netfilter with -o json and checks stdout is one JSON document.
func TestJSONCommandsPrintJSON(t *testing.T) {
	h := testhost.New(t).Debian12()
	for _, args := range [][]string{
		{"version"},
		{"detect"},
		{"render", "expected", "--backend", "nftables"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"rke2-proxy-backend", "--root", h.Dir(), "-o", "json"}, args...), &stdout, &stderr)
		if code != ExitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr.String())
			continue
		}
		if !json.Valid(stdout.Bytes()) {
			t.Errorf("%v -o json: stdout is not JSON:\n%s", args, stdout.String())
		}
	}
}

func splitKey(key string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(key)) {
		out = append(out, string(f))
	}
	return out
}
