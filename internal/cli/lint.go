package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// newLintCommand checks operator config files as a pipeline holds them,
// before they reach a node: a file apply would refuse stops RKE2 on every
// node it is pushed to (fail-closed), so the pipeline should refuse it
// first. It reads the named files and nothing of the host it runs on.
func newLintCommand(g *globals) *cobra.Command {
	cmd := declare(&cobra.Command{
		Use:   "lint [FILE...]",
		Short: "Check operator config files as every node would read them, before a push (exit 0 ok, 2 refused)",
		RunE: func(cmd *cobra.Command, files []string) error {
			bad := 0
			if len(files) == 0 {
				bad = g.lintNodeConfig()
			}
			for _, f := range files {
				name := f
				if f == "-" {
					name = "<stdin>"
				}
				if !g.lintFile(name, func() ([]byte, error) { return readLintFile(f) }) {
					bad++
				}
			}
			if bad > 0 {
				return silentExit(ExitUsage)
			}
			return nil
		},
	}, spec{help: "lint", json: textOnly})
	return cmd
}

// lintNodeConfig lints the file this node reads (--config under --root);
// an absent default file is the built-in defaults, which are valid.
func (g *globals) lintNodeConfig() (bad int) {
	root := g.hostRoot()
	if _, err := root.Stat(g.configFile); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(g.stdout, "%s: absent: the built-in defaults apply\n", g.configFile)
		return 0
	}
	if !g.lintFile(g.configFile, func() ([]byte, error) { return root.ReadFile(g.configFile) }) {
		return 1
	}
	return 0
}

// lintFile prints "FILE: ok" or the refusal, compiler-like, and reports
// whether the file passed.
func (g *globals) lintFile(name string, read func() ([]byte, error)) bool {
	data, err := read()
	if err != nil {
		fmt.Fprintf(g.stderr, "%s: cannot read: %v: give the path of an operator config file (a regular file)\n", name, err)
		return false
	}
	if err := config.Lint(name, data); err != nil {
		fmt.Fprintln(g.stderr, err)
		return false
	}
	fmt.Fprintf(g.stdout, "%s: ok\n", name)
	return true
}

// readLintFile reads a pipeline's file: a path on this machine as given
// (not under --root), or "-" for standard input, bounded as the node's own
// read of the config is.
func readLintFile(name string) ([]byte, error) {
	if name == "-" {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, hostfs.MaxTextFile+1))
		if err == nil && len(data) > hostfs.MaxTextFile {
			err = fmt.Errorf("more than %d bytes", hostfs.MaxTextFile)
		}
		return data, err
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	return hostfs.New("/").ReadFile(abs)
}
