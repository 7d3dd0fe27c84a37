package fleetview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
)

// Exit codes: 0 the table printed, 1 the nodes could not be listed, 2 a
// usage error (a flag, or a kubeconfig the plugin cannot use).
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitUsage   = 2
	commandName = "kubectl proxy-backend"
)

// List GETs an API path (here /api/v1/nodes with its query) with the
// user's credentials and returns the body.
type List func(ctx context.Context, path string) ([]byte, error)

// Connector makes a List for the kubeconfig file; its errors are usage
// errors (the file, the key and what to do).
type Connector func(kubeconfig string) (List, error)

// Env is what the command reads of its process.
type Env struct {
	Getenv         func(string) string
	Stdout, Stderr io.Writer
	Now            func() time.Time
	// Width is the terminal's width in columns (0: not known, the table
	// fits DefaultWidth).
	Width int
}

// Run is `kubectl proxy-backend [--problems] [--upgrade 1.38] [--pool SELECTOR] [-o text|wide|json] [--kubeconfig FILE]`.
func Run(ctx context.Context, args []string, env Env, connect Connector) int {
	fs := pflag.NewFlagSet(commandName, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	problems := fs.Bool("problems", false, "only nodes with a problem: the node says so, cannot tell, or never reported")
	pool := fs.String("pool", "", "only nodes matching this label selector, e.g. node-pool=nas")
	output := fs.StringP("output", "o", "text", "text, wide (every column, messages whole) or json")
	upgrade := fs.String("upgrade", "", "list instead the nodes whose backend would move on this Kubernetes minor (1.38), and those that cannot tell")
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig to use (default $KUBECONFIG, else ~/.kube/config)")
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: %s [flags]\n\nEvery node's planned and verified kube-proxy backend, from the Node objects.\n\n%s", commandName, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(env.Stderr, "%s: %v (see --help)\n", commandName, err)
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: unexpected argument %q (it takes flags only)\n", commandName, fs.Arg(0))
		return ExitUsage
	}
	if *output != "text" && *output != "wide" && *output != "json" {
		fmt.Fprintf(env.Stderr, "%s: -o %q: use text, wide or json\n", commandName, *output)
		return ExitUsage
	}
	if *upgrade != "" && *upgrade != "1.38" && *upgrade != "v1.38" {
		fmt.Fprintf(env.Stderr, "%s: --upgrade %q: only 1.38 is known (the minor whose kube-proxy picks its iptables flavour by kubelet's hint chains)\n", commandName, *upgrade)
		return ExitUsage
	}
	file, err := KubeconfigFile(*kubeconfig, env.Getenv)
	if err == nil {
		var list List
		if list, err = connect(file); err == nil {
			if *upgrade != "" {
				return showUpgrade(ctx, list, *pool, *output, env)
			}
			return show(ctx, list, *pool, *problems, *output, env)
		}
	}
	fmt.Fprintf(env.Stderr, "%s: %v\n", commandName, err)
	return ExitUsage
}

func show(ctx context.Context, list List, pool string, problems bool, output string, env Env) int {
	note := func(line string) { fmt.Fprintf(env.Stderr, "%s: %s\n", commandName, line) }
	nodes, err := ListNodes(ctx, list, pool, note)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: listing the nodes: %v\n", commandName, err)
		return ExitFailed
	}
	now := env.Now()
	var rows []Row
	for _, n := range nodes {
		if r := RowOf(n, now); !problems || r.HasProblem() {
			rows = append(rows, r)
		}
	}
	if output == "json" {
		data, err := JSON(rows)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", commandName, err)
			return ExitFailed
		}
		env.Stdout.Write(data)
		return ExitOK
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stderr, "No nodes found.")
		return ExitOK
	}
	io.WriteString(env.Stdout, Table(rows, env.Width, output == "wide"))
	return ExitOK
}

// showUpgrade prints Upgrade138's rows.
func showUpgrade(ctx context.Context, list List, pool, output string, env Env) int {
	note := func(line string) { fmt.Fprintf(env.Stderr, "%s: %s\n", commandName, line) }
	nodes, err := ListNodes(ctx, list, pool, note)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: listing the nodes: %v\n", commandName, err)
		return ExitFailed
	}
	rows := Upgrade138(nodes)
	if output == "json" {
		data, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", commandName, err)
			return ExitFailed
		}
		env.Stdout.Write(append(jsonSafe(data), '\n'))
		return ExitOK
	}
	if len(rows) == 0 {
		fmt.Fprintf(env.Stderr, "No node would move on Kubernetes 1.38 (of %d).\n", len(nodes))
		return ExitOK
	}
	io.WriteString(env.Stdout, UpgradeTable(rows))
	return ExitOK
}

// KubeconfigFile is the kubeconfig kubectl would read: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config. kubectl merges a KUBECONFIG list of
// several files; the plugin reads one, so a list naming more than one
// existing file is refused with what to do.
func KubeconfigFile(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if list := getenv("KUBECONFIG"); list != "" {
		var found []string
		for _, f := range filepath.SplitList(list) {
			if f == "" {
				continue
			}
			if _, err := os.Stat(f); err == nil {
				found = append(found, f)
			}
		}
		switch len(found) {
		case 0:
			return "", fmt.Errorf("KUBECONFIG=%s: no such file", list)
		case 1:
			return found[0], nil
		default:
			return "", fmt.Errorf("KUBECONFIG=%s: names %d files, and this plugin reads one kubeconfig, not a merge: pass one with --kubeconfig (or `kubectl config view --flatten` into one file)", list, len(found))
		}
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("no KUBECONFIG and no HOME to find ~/.kube/config: pass --kubeconfig")
	}
	return filepath.Join(home, ".kube", "config"), nil
}
