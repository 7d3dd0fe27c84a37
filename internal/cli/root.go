// Package cli is the command line: one file per subcommand (watch beside
// verify, whose flags, config and exits it shares), each thin, with the
// work done in the packages it calls.
package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli/help"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// GeneratorName is the argv[0] that selects generator mode: the name the
// generator signs its log with.
const GeneratorName = generator.Name

// globals are the flags every subcommand shares.
type globals struct {
	root       string
	configFile string
	output     string
	distro     distro.Kind // --distribution ("": find it from the host)
	stdout     io.Writer
	stderr     io.Writer
}

func (g *globals) hostRoot() hostfs.Root { return hostfs.New(g.root) }

// host is where this run reads its facts and config: --root, --config and
// this process's environment.
func (g *globals) host() hostplan.Host {
	return hostplan.Host{Root: g.hostRoot(), ConfigFile: g.configFile, Environ: os.Environ(), Distribution: distro.Find(g.hostRoot(), g.distro).Kind}
}

func (g *globals) json() bool { return g.output == "json" }

// logf is a command's log to stderr, one line signed with its name.
func (g *globals) logf(name string) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(g.stderr, "rke2-proxy-backend "+name+": "+format+"\n", args...)
	}
}

// NewRootCommand builds the whole command tree.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:               "rke2-proxy-backend",
		Short:             "Keep RKE2's kube-proxy on the right netfilter backend",
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput(cmd); err != nil {
				return err
			}
			return g.checkHost(cmd)
		},
	}
	declare(root, spec{help: "root"})
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) { help.Fill(c); defaultHelp(c, args) })
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	pf := root.PersistentFlags()
	pf.StringVar(&g.root, "root", hostfs.DefaultRoot(), "host root every path is read and written under (env "+hostfs.EnvRoot+")")
	pf.StringVar(&g.configFile, "config", hostfs.ConfigFile, "operator config file (a host path, under --root); a file named here must exist")
	pf.Var(&g.distro, "distribution", "auto, rke2 or k3s: the distribution whose units and config are managed (default: found from the installed units)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json (a command without a JSON form refuses json)")
	for _, add := range subcommands {
		root.AddCommand(add(g))
	}
	return root
}

// checkHost refuses a host root that is not a directory (commands that
// read no host do not look) and a --config naming a missing file
// (hostfs.CheckRoot and config.CheckNamed say why), as usage errors.
func (g *globals) checkHost(cmd *cobra.Command) error {
	switch cmd.Name() {
	case "version", "completion", "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
	default:
		if err := hostfs.CheckRoot(g.root); err != nil {
			what := "--root " + g.root
			if !cmd.Flags().Changed("root") {
				what = hostfs.EnvRoot + "=" + g.root + " (--root's default)"
			}
			return usageError(fmt.Errorf("%s: %w", what, err))
		}
	}
	if !cmd.Flags().Changed("config") {
		return nil
	}
	if err := config.CheckNamed(g.hostRoot(), g.configFile); err != nil {
		return usageError(fmt.Errorf("--config %s: %w", g.configFile, err))
	}
	return nil
}

// subcommands are every subcommand, each built by its own file.
var subcommands = []func(*globals) *cobra.Command{
	newAdoptCommand, newApplyCommand, newBenchCommand, newCensusCommand, newCertifyCommand, newCheckCommand, newCleanupCommand, newDetectCommand, newGenerateCommand, newLintCommand,
	newRenderCommand, newSwitchCommand, newVerifyCommand, newVersionCommand, newWatchCommand,
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && filepath.Base(args[0]) == GeneratorName {
		if dirs := args[1:]; generator.PlainArgs(dirs) {
			// systemd runs a generator with its output directories and
			// nothing else, at every boot and daemon-reload: run it before
			// the command tree is built, which only flags, help and usage
			// errors need (every flag's default is what the tree would set).
			generator.OnHost(hostfs.New(hostfs.DefaultRoot()), hostfs.ConfigFile, "", dirs, stderr)
			return ExitOK
		}
		args = append([]string{args[0], "generate"}, args[1:]...)
	}
	root := NewRootCommand(stdout, stderr)
	if len(args) > 1 && (args[1] == cobra.ShellCompRequestCmd || args[1] == cobra.ShellCompNoDescRequestCmd) {
		// Only a shell asking for completions needs the flag values: the
		// generator builds this tree on every boot and should not pay for them.
		help.Completions(root)
	}
	root.SetArgs(args[1:])
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "rke2-proxy-backend: "+msg)
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "accepts ") || strings.Contains(err.Error(), "requires ") {
		return ExitUsage
	}
	return exitCode(err)
}

// spec is what a subcommand declares besides its flags: its use line and
// summary, the help/NAME.txt of its long help ("": none), and its output
// with -o json (output.go's json).
type spec struct{ use, short, help, json string }

// jsonOutput is the annotation of a command's output with -o json.
const jsonOutput = "rke2-proxy-backend/json"

// declare records s's help file and JSON output on c, for help.Fill and
// checkOutput.
func declare(c *cobra.Command, s spec) *cobra.Command {
	c.Annotations = map[string]string{help.File: s.help, jsonOutput: s.json}
	return c
}

// flagsOnly builds a subcommand whose flags carry everything: cobra refuses
// a positional argument with a usage error, and run reads the flags. Every
// subcommand but the generator's is one.
func flagsOnly(s spec, run func(cmd *cobra.Command) error) *cobra.Command {
	return declare(&cobra.Command{Use: s.use, Short: s.short, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd) }}, s)
}
