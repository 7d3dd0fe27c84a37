package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli/help"
)

// helpFile is the annotation naming a command's help/NAME.txt (package
// help). Its Long is read only when help is shown or the man pages are made
// (FillHelp), so building the command tree, which apply does at every boot,
// reads no prose.
const helpFile = "rke2-proxy-backend/help-file"

// jsonOutput is the annotation of a command's output with -o json.
const jsonOutput = "rke2-proxy-backend/json"

// declare records s's help file and JSON output on c, for FillHelp and
// checkOutput.
func declare(c *cobra.Command, s spec) *cobra.Command {
	c.Annotations = map[string]string{helpFile: s.help, jsonOutput: s.json}
	return c
}

// FillHelp sets each command's Long, from c down, from its help file.
func FillHelp(c *cobra.Command) {
	if name := c.Annotations[helpFile]; name != "" && c.Long == "" {
		c.Long = help.Text(name)
	}
	for _, sub := range c.Commands() {
		FillHelp(sub)
	}
}
