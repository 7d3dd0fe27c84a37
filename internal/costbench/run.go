package costbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// loaders are the programs backend b's loads run (both families, each
// once): ruleload's, which load runs, so the tools recorded are the ones
// measured.
func loaders(b backend.Backend) []string {
	var names []string
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		if name := ruleload.Argv(b, fam)[0]; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// Plan is what Run measures.
type Plan struct {
	Services int
	// Backends are the ones the host can run (decide's capability
	// judgement); Unrunnable says why the others are left out.
	Backends   []backend.Backend
	Unrunnable []bench.Skipped
	// Kernel is the running kernel's release, recorded with the figures.
	Kernel string
	// Self is the argv that reaches ChildMain (see RunIsolated).
	Self []string
}

// Run measures every backend of the plan, each in its own fresh network
// namespace, and returns the report for the state file. A backend whose
// loader is not installed is skipped with a reason; a loader that fails
// is an error (the figures would be wrong).
func Run(ctx context.Context, p Plan, progress io.Writer) (bench.Report, error) {
	rep := bench.Report{Services: p.Services, Kernel: p.Kernel, Skipped: append([]bench.Skipped{}, p.Unrunnable...), Results: []bench.Result{}, Tools: []bench.Tool{}}
	for _, b := range p.Backends {
		tools, missing := toolsFor(ctx, b)
		if missing != "" {
			rep.Skipped = append(rep.Skipped, bench.Skipped{Backend: b, Reason: missing})
			fmt.Fprintf(progress, "bench: %s: skipped: %s\n", b, missing)
			continue
		}
		fmt.Fprintf(progress, "bench: %s: loading %d services in a new network namespace\n", b, p.Services)
		res, err := RunIsolated(ctx, p.Self, b, p.Services, progress)
		if err != nil {
			return rep, err
		}
		rep.Results = append(rep.Results, res)
		rep.Tools = append(rep.Tools, tools...)
	}
	rep.MeasuredAt = time.Now().UTC().Format(time.RFC3339)
	return rep, nil
}

// toolsFor finds the backend's loaders and records what identifies each
// binary's version; missing is why the backend cannot be measured.
func toolsFor(ctx context.Context, b backend.Backend) (tools []bench.Tool, missing string) {
	for _, name := range loaders(b) {
		p, err := hostfs.LookTool(name, "measuring "+string(b))
		if err != nil {
			return nil, err.Error()
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", p, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", real, err)
		}
		tools = append(tools, bench.Tool{Name: name, Path: real, Version: version(ctx, p), Size: fi.Size(), ModTimeNs: fi.ModTime().UnixNano()})
	}
	return tools, ""
}

// version is the tool's --version line ("" when it prints none in time).
func version(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
