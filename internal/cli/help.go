package cli

import (
	"embed"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/watch"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// The subcommands' long help is prose, kept in help/NAME.txt where it reads
// (and diffs) as the text an operator sees; the paths and names it quotes
// come from the constants that define them, as {{package.Name}}.
//
//go:embed help/*.txt
var helpFiles embed.FS

var helpValues = strings.NewReplacer(
	"{{hostfs.PlanFile}}", hostfs.PlanFile,
	"{{hostfs.StatusFile}}", hostfs.StatusFile,
	"{{hostfs.BenchFile}}", hostfs.BenchFile,
	"{{hostfs.SwitchJournal}}", hostfs.SwitchJournal,
	"{{hostfs.WatchHeartbeat}}", hostfs.WatchHeartbeat,
	"{{apply.LockFile}}", apply.LockFile,
	"{{apply.DefaultLockWait.String()}}", apply.DefaultLockWait.String(),
	"{{rke2.DropInName}}", rke2.DropInName,
	"{{units.VerifyUnit}}", units.VerifyUnit,
	"{{units.WatchUnit}}", units.WatchUnit,
	"{{verify.MetricsFile}}", verify.MetricsFile,
	"{{watch.MetricsFile}}", watch.MetricsFile,
)

// helpFile is the annotation naming a command's help/NAME.txt. Its Long is
// read only when help is shown or the man pages are made (FillHelp), so
// building the command tree, which apply does at every boot, reads no prose.
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
		c.Long = helpText(name)
	}
	for _, sub := range c.Commands() {
		FillHelp(sub)
	}
}

// helpText is help/NAME.txt with its placeholders filled in. A missing file
// is a build mistake (the files are embedded), so it panics on first use,
// which TestHelpTexts reaches for every subcommand.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(fmt.Sprintf("help text %s: %v", name, err))
	}
	return strings.TrimSuffix(helpValues.Replace(string(b)), "\n")
}
