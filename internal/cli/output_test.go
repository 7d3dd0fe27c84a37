package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
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

// Every command of ours says what -o json does for it (its spec), so a new
// command cannot refuse or print JSON by accident.
func TestEveryCommandDeclaresItsOutput(t *testing.T) {
	for _, c := range everyCommand(t) {
		if cobraOwn(c) {
			continue
		}
		if c.Annotations[jsonOutput] == "" {
			t.Errorf("%q declares no output: say in its spec whether it prints JSON with -o json", CommandKey(c))
		}
	}
}

// cobraOwn is a command cobra adds: help, completion and the completion
// requests, which declare no output.
func cobraOwn(c *cobra.Command) bool {
	return c.Name() == "help" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd ||
		(c.HasParent() && c.Parent().Name() == "completion")
}

// TestTextOnlyCommandsRefuseJSON runs each text-only command with -o json:
// exit 2, one line naming the command and its hint, nothing on stdout.
func TestTextOnlyCommandsRefuseJSON(t *testing.T) {
	h := testhost.New(t).Debian12()
	hints := map[string]string{
		"apply": "run `rke2-proxy-backend detect -o json` for the decision, or read " + hostfs.PlanFile + " after apply",
		"check": "read " + hostfs.StatusFile + ", which is verify's result as JSON",
	}
	var refused []string
	for _, c := range everyCommand(t) {
		key := CommandKey(c)
		if c.Annotations[jsonOutput] == printsJSON || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			continue // the completion requests parse no flags of their own: -o reaches them as a word to complete
		}
		refused = append(refused, key)
		t.Run(key, func(t *testing.T) {
			args := append([]string{"rke2-proxy-backend", "--root", h.Dir(), "-o", "json"}, splitKey(key)...)
			if key == "generate" {
				args = append(args, t.TempDir())
			}
			var stdout, stderr bytes.Buffer
			code := Main(args, &stdout, &stderr)
			hint := "run it without -o json"
			if h, ok := hints[key]; ok {
				hint = h
			}
			want := "rke2-proxy-backend: " + key + " has no JSON output (--output json): " + hint + "\n"
			if code != ExitUsage || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2, stderr %q, no stdout", code, stderr.String(), stdout.String(), want)
			}
		})
	}
	sort.Strings(refused)
	want := "apply check completion bash completion fish completion powershell completion zsh generate help lint render watch"
	if got := strings.Join(refused, " "); got != want {
		t.Errorf("text-only commands: %s; want %s", got, want)
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
