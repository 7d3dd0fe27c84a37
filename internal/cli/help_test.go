package cli

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli/help"
)

// Every help file is some subcommand's, and none keeps a placeholder that
// package help does not know (it would reach the operator as {{...}}).
func TestHelpTexts(t *testing.T) {
	longs := map[string]bool{}
	root := NewRootCommand(io.Discard, io.Discard)
	for _, c := range allCommands(root) {
		if c.Long != "" {
			t.Errorf("%s: Long is set before help is asked for: building the tree must read no help file", c.CommandPath())
		}
	}
	help.Fill(root)
	for _, c := range allCommands(root) {
		longs[c.Long] = true
		if strings.Contains(c.Long, "{{") {
			t.Errorf("%s: help keeps a placeholder: %q", c.CommandPath(), regexp.MustCompile(`\{\{[^}]*\}\}`).FindString(c.Long))
		}
	}
	names := help.Names()
	if len(names) == 0 {
		t.Fatal("no help files")
	}
	for _, n := range names {
		if !longs[help.Text(n)] {
			t.Errorf("help/%s.txt is no subcommand's long help: remove it or use it", n)
		}
	}
}

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}
