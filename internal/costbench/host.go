package costbench

import (
	"context"
	"errors"
	"fmt"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// DefaultServices is bench's cluster size unless told: CI's size and a
// mid-sized cluster's.
const DefaultServices = 1000

// OnHost is `bench` on root's host: it measures at services the backends
// the host can run (decide's judgement on a fresh probe), or only, merges
// the figures with the earlier record (a one-backend run keeps the
// others') and records them atomically as hostfs.BenchFile. It returns the
// report and the bytes recorded. An error is the whole message.
func OnHost(ctx context.Context, root hostfs.Root, services int, only backend.Backend, progress io.Writer) (bench.Report, []byte, error) {
	if os.Geteuid() != 0 {
		return bench.Report{}, nil, errors.New("bench needs root: it creates a network namespace per backend (run it with sudo; the host's rules are not touched)")
	}
	capable := hostplan.ProbeCapable(root, distro.Find(root, "").Kind)
	plan := Plan{Services: services, Kernel: capable.Kernel, Self: []string{selfPath(), "bench"}}
	runnable, not := capable.Runnable, capable.Unrunnable
	for _, b := range backend.All {
		if only != "" && b != only {
			continue
		}
		if why, ruledOut := not[b]; ruledOut {
			if only != "" {
				return bench.Report{}, nil, fmt.Errorf("--backend %s: this host cannot run it: %s", b, why)
			}
			plan.Unrunnable = append(plan.Unrunnable, bench.Skipped{Backend: b, Reason: why})
			fmt.Fprintf(progress, "bench: %s: skipped: %s\n", b, why)
		}
	}
	for _, b := range runnable {
		if only == "" || b == only {
			plan.Backends = append(plan.Backends, b)
		}
	}
	rep, err := Run(ctx, plan, progress)
	if err != nil {
		return rep, nil, fmt.Errorf("bench: %w", err)
	}
	switch old, err := readRecord(root); {
	case err == nil:
		rep = bench.Merge(old, rep)
	case !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(progress, "bench: the earlier result in %s is not kept: %v; this run's figures replace it\n", root.Path(hostfs.BenchFile), err)
	}
	data, err := bench.Encode(rep)
	if err != nil {
		return rep, nil, fmt.Errorf("bench: encode the result: %w", err)
	}
	if _, err := root.WriteFileAtomic(hostfs.BenchFile, data, 0o644); err != nil {
		return rep, nil, fmt.Errorf("bench: record the result in %s: %w (the figures are printed below but detect and auto will not see them)", root.Path(hostfs.BenchFile), err)
	}
	return rep, data, nil
}

// readRecord reads the earlier result, if any, to merge a one-backend run.
func readRecord(root hostfs.Root) (bench.Report, error) {
	data, err := root.ReadFileMax(hostfs.BenchFile, bench.MaxSize)
	if err != nil {
		return bench.Report{}, err
	}
	return bench.Parse(data)
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
