package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/costbench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

func init() { register(newBenchCommand) }

// defaultBenchServices is CI's size and a mid-sized cluster's.
const defaultBenchServices = 1000

func newBenchCommand(g *globals) *cobra.Command {
	var (
		services    int
		backendName string
	)
	cmd := flagsOnly("bench [--services N] [--backend B|all]", "Measure what kube-proxy's rule loads cost on this node, per backend", helpText("bench"), func(cmd *cobra.Command) error {
		if costbench.IsChild() {
			if code := costbench.ChildMain(cmd.Context(), g.stdout, g.stderr); code != 0 {
				return errSilentFailure
			}
			return nil
		}
		return runBench(cmd.Context(), g, services, backendName)
	})
	f := cmd.Flags()
	f.IntVar(&services, "services", defaultBenchServices, fmt.Sprintf("cluster size to measure: services (2 endpoints each), 1 to %d", expected.MaxServices))
	f.StringVar(&backendName, "backend", "all", "backend to measure: "+backend.Names()+" or all (those this host can run)")
	return cmd
}

func runBench(ctx context.Context, g *globals, services int, backendName string) error {
	if services < 1 || services > expected.MaxServices {
		return usageError(fmt.Errorf("--services %d: must be between 1 and %d", services, expected.MaxServices))
	}
	only, err := backendOrAll("--backend", backendName)
	if err != nil {
		return usageError(err)
	}
	if os.Geteuid() != 0 {
		return failure("bench needs root: it creates a network namespace per backend (run it with sudo; the host's rules are not touched)")
	}
	root := g.hostRoot()
	f := facts.Probe(root, facts.Options{})
	plan := costbench.Plan{Services: services, Kernel: f.Kernel.Release, Self: []string{selfPath(), "bench"}}
	runnable, not := decide.Runnable(f)
	for _, b := range backend.All {
		if only != "" && b != only {
			continue
		}
		if why, ruledOut := not[b]; ruledOut {
			if only != "" {
				return failure("--backend %s: this host cannot run it: %s", b, why)
			}
			plan.Unrunnable = append(plan.Unrunnable, bench.Skipped{Backend: b, Reason: why})
			fmt.Fprintf(g.stderr, "bench: %s: skipped: %s\n", b, why)
		}
	}
	for _, b := range runnable {
		if only == "" || b == only {
			plan.Backends = append(plan.Backends, b)
		}
	}
	rep, err := costbench.Run(ctx, plan, g.stderr)
	if err != nil {
		return failure("bench: %w", err)
	}
	switch old, err := readBenchFile(root); {
	case err == nil:
		rep = bench.Merge(old, rep)
	case !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(g.stderr, "bench: the earlier result in %s is not kept: %v; this run's figures replace it\n", root.Path(hostfs.BenchFile), err)
	}
	data, err := bench.Encode(rep)
	if err != nil {
		return failure("bench: encode the result: %w", err)
	}
	if _, err := root.WriteFileAtomic(hostfs.BenchFile, data, 0o644); err != nil {
		return failure("bench: record the result in %s: %w (the figures are printed below but detect and auto will not see them)", root.Path(hostfs.BenchFile), err)
	}
	if g.json() {
		_, err := g.stdout.Write(data) // the bytes recorded, schema and all
		return err
	}
	_, err = fmt.Fprint(g.stdout, benchText(rep))
	return err
}

// readBenchFile reads the earlier result, if any, to merge a one-backend run.
func readBenchFile(root hostfs.Root) (bench.Report, error) {
	data, err := root.ReadFileMax(hostfs.BenchFile, bench.MaxSize)
	if err != nil {
		return bench.Report{}, err
	}
	return bench.Parse(data)
}

// benchText is the human table: one line per backend, both steps.
func benchText(rep bench.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d services (2 endpoints each, IPv4 and IPv6), kernel %s\n", rep.Services, rep.Kernel)
	for _, t := range rep.Tools {
		fmt.Fprintf(&b, "  %s: %s\n", t.Name, detectOrUnknown(t.Version))
	}
	fmt.Fprintf(&b, "\n%-16s %-28s %s\n", "backend", "full sync: wall (CPU)", "partial sync: wall (CPU)")
	for _, r := range rep.Results {
		full, _ := r.Step(bench.StepFull)
		part, _ := r.Step(bench.StepPartial)
		fmt.Fprintf(&b, "%-16s %-28s %s\n", r.Backend, stepText(full), stepText(part))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(&b, "%-16s not measured: %s\n", s.Backend, s.Reason)
	}
	return b.String()
}

func stepText(s bench.Step) string {
	return fmt.Sprintf("%.3f s (%.3f s)", s.WallSeconds, s.UserSeconds+s.SysSeconds)
}

// selfPath is how a bench child re-executes this program: by the name it
// was started with (found in PATH, as a shell would), which also keeps
// multi-call test binaries on the right entry point; else /proc/self/exe.
func selfPath() string {
	arg0 := os.Args[0]
	if strings.Contains(arg0, "/") {
		if abs, err := filepath.Abs(arg0); err == nil {
			return abs
		}
	} else if p, err := exec.LookPath(arg0); err == nil {
		return p
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return arg0
}
