// Package boundexec runs a helper program with a limit that really ends it
// and output that cannot grow without bound. exec.CommandContext alone
// kills only the program, then waits for its output pipes to close, which a
// child the program left behind can keep open for as long as it lives.
package boundexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Command is one bounded run.
type Command struct {
	Argv []string
	// Env is the program's whole environment (nil: an empty one, so
	// nothing of ours leaks into it).
	Env []string
	// Timeout ends the program (and its process group) when reached.
	Timeout time.Duration
	// Grace is how long a pipe may stay open after the program ended or
	// was killed; 0 means one second.
	Grace time.Duration
	// MaxOutput caps what is kept of stdout and of stderr, each.
	MaxOutput int
	// Stdin is fed to the program ("" gives it an empty stdin).
	Stdin string
	// NewNetns starts the program in a network namespace of its own, made
	// by the clone that starts it (root only) and gone when the program and
	// its children are: unshare -n without another exec.
	NewNetns bool
}

// Result is what the program printed, cut at MaxOutput.
type Result struct {
	Stdout, Stderr string
	// Truncated says more than MaxOutput came on stdout or stderr.
	Truncated bool
	// CPU is the user and system time the program used, its waited-for
	// children's included (0 when it did not run).
	CPU time.Duration
}

// ErrTimeout is wrapped by the error of a run that hit its Timeout.
var ErrTimeout = errors.New("timed out")

// Run runs c. The program gets a process group of its own, killed whole at
// the timeout and again after the program ended, so nothing it started
// outlives it in the group; a child that left the group can hold a pipe at
// most Grace longer. A program that exited 0 but whose pipe was held open
// succeeded.
func Run(ctx context.Context, c Command) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.NewNetns {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = c.Grace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = time.Second
	}
	stdout, stderr := &capped{max: c.MaxOutput}, &capped{max: c.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	err := cmd.Run()
	if cmd.Process != nil {
		// The group id cannot be reused while a member lives, so this
		// reaches only what the program left behind.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{Stdout: stdout.buf.String(), Stderr: stderr.buf.String(), Truncated: stdout.cut || stderr.cut}
	if cmd.ProcessState != nil {
		res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return res, fmt.Errorf("did not finish within %s and was killed: %w", c.Timeout, ErrTimeout)
	case errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success():
		return res, nil
	}
	return res, err
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.cut = true
	}
	if room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
