package boundexec

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func run(t *testing.T, script string, timeout time.Duration) (Result, time.Duration, error) {
	t.Helper()
	start := time.Now()
	res, err := Run(context.Background(), Command{
		Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
		Timeout: timeout, Grace: 200 * time.Millisecond, MaxOutput: 16,
	})
	return res, time.Since(start), err
}

// A program that hangs while its child holds stdout is ended at the limit,
// child and all: exec.CommandContext alone would wait for the child.
func TestRunEndsAHangingProgramAndItsChildren(t *testing.T) {
	_, took, err := run(t, "sleep 60 & exec sleep 60", 300*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Errorf("err = %v; want a timeout", err)
	}
	if took > 5*time.Second {
		t.Errorf("took %s with a 300ms limit", took)
	}
}

// A program that succeeded is not held up by a child that left its process
// group with the pipe open.
func TestRunDoesNotWaitForALeftoverChild(t *testing.T) {
	res, took, err := run(t, "echo ok; setsid sleep 5 & exit 0", 30*time.Second)
	if err != nil || res.Stdout != "ok\n" {
		t.Errorf("res %+v err %v; want ok", res, err)
	}
	if took > 3*time.Second {
		t.Errorf("took %s: waited for the leftover child", took)
	}
}

func TestRunCapsOutput(t *testing.T) {
	res, _, err := run(t, "head -c 100000 /dev/zero | tr '\\0' x; echo err >&2", 10*time.Second)
	if err != nil || len(res.Stdout) != 16 || !res.Truncated || res.Stderr != "err\n" {
		t.Errorf("res %q/%q truncated=%v err %v; want 16 bytes kept", res.Stdout, res.Stderr, res.Truncated, err)
	}
}

func TestRunReportsExitStatus(t *testing.T) {
	_, _, err := run(t, "exit 3", 10*time.Second)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("err = %v; want exit status 3", err)
	}
}

func TestRunFeedsStdin(t *testing.T) {
	res, err := Run(context.Background(), Command{Argv: []string{"/bin/sh", "-c", "tr a-z A-Z"}, Stdin: "rules\n", Timeout: 10 * time.Second, MaxOutput: 64})
	if err != nil || res.Stdout != "RULES\n" {
		t.Errorf("stdout %q, err %v", res.Stdout, err)
	}
}

// NewNetns gives the program a network namespace of its own: its
// /proc/self/ns/net is not ours.
func TestRunNewNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		testhost.Unmet(t, "a network namespace needs root")
	}
	ours, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{false, true} {
		res, err := Run(context.Background(), Command{
			Argv: []string{"/bin/sh", "-c", "readlink /proc/self/ns/net"}, Env: []string{"PATH=/usr/bin:/bin"},
			Timeout: 10 * time.Second, MaxOutput: 256, NewNetns: fresh,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(res.Stdout); (got != ours) != fresh {
			t.Errorf("NewNetns %v: the program's namespace is %s, ours %s", fresh, got, ours)
		}
	}
}

// CPU counts the program's children too: a shell whose child spins for
// 200 ms of CPU reports at least most of it.
func TestRunReportsCPUWithChildren(t *testing.T) {
	res, _, err := run(t, `sh -c 'end=$(($(date +%s%N) + 200000000)); while [ $(date +%s%N) -lt $end ]; do :; done'`, 30*time.Second)
	if err != nil || res.CPU < 100*time.Millisecond {
		t.Errorf("CPU %v, err %v; want at least 100ms", res.CPU, err)
	}
}
