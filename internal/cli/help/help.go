// Package help is what an operator or a shell asks of the command tree,
// filled in only when asked, so that building the tree, which apply and the
// generator do at every boot, reads no prose and registers no completions:
// the subcommands' long help and the values the shells offer for flags
// (completion.go). The long help is prose, kept in NAME.txt where it reads
// (and diffs) as the text an operator sees; the paths and names it quotes
// come from the constants that define them, as {{package.Name}}.
package help

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// File is the annotation naming a command's NAME.txt.
const File = "rke2-proxy-backend/help-file"

// Fill sets each command's Long, from c down, from the file its File
// annotation names. It runs only when help is shown or the man pages are
// made.
func Fill(c *cobra.Command) {
	if name := c.Annotations[File]; name != "" && c.Long == "" {
		c.Long = Text(name)
	}
	for _, sub := range c.Commands() {
		Fill(sub)
	}
}

//go:embed *.txt
var files embed.FS

var values = strings.NewReplacer(
	"{{hostfs.PlanFile}}", hostfs.PlanFile,
	"{{hostfs.ConfigFile}}", hostfs.ConfigFile,
	"{{hostfs.StatusFile}}", hostfs.StatusFile,
	"{{hostfs.BenchFile}}", hostfs.BenchFile,
	"{{hostfs.SwitchJournal}}", hostfs.SwitchJournal,
	"{{hostfs.WatchHeartbeat}}", hostfs.WatchHeartbeat,
	"{{apply.LockFile}}", apply.LockFile,
	"{{apply.DefaultLockWait.String()}}", apply.DefaultLockWait.String(),
	"{{rke2.DropInName}}", rke2.DropInName,
	"{{units.VerifyUnit}}", units.VerifyUnit,
	"{{units.WatchUnit}}", units.WatchUnit,
	"{{verify.MetricsFile}}", proof.MetricsFile,
	"{{watch.MetricsFile}}", proof.DriftMetricsFile,
)

// Text is NAME.txt with its placeholders filled in. A missing file is a
// build mistake (the files are embedded), so it panics on first use, which
// cli's TestHelpTexts reaches for every subcommand.
func Text(name string) string {
	b, err := files.ReadFile(name + ".txt")
	if err != nil {
		panic(fmt.Sprintf("help text %s: %v", name, err))
	}
	return strings.TrimSuffix(values.Replace(string(b)), "\n")
}

// Names are the help files there are, by NAME, so a test can hold each to
// some subcommand.
func Names() []string {
	names, _ := fs.Glob(files, "*.txt") // the pattern is well formed
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".txt")
	}
	return names
}
