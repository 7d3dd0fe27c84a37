package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/sleep"
)

// LockFile serialises every apply on a node: rke2-server and rke2-agent both
// run apply as ExecStartPre, and an operator may run it by hand during a
// start. Without it one run's stale-temp cleanup deleted the other's temp,
// and the give-up path removed the drop-in the other had just written.
// It lives on /run (tmpfs), so a lock never outlives a boot; the kernel
// drops a flock when its holder dies, so a kill -9 never leaves it held.
const LockFile = hostfs.RunDir + "/apply.lock"

// DefaultLockWait bounds how long apply waits for another apply: a run
// takes well under a second unless modprobe stalls, which kmod bounds.
const DefaultLockWait = 2 * time.Minute

// lockPoll is how often a waiting apply retries the lock.
const lockPoll = 50 * time.Millisecond

// lock takes LockFile for this apply, waiting at most wait.
func lock(ctx context.Context, o Options, dropInPath string, wait time.Duration) (release func(), err error) {
	return Lock(ctx, Locking{Root: o.Root, Role: "apply", DropInPath: dropInPath, Wait: wait, Log: o.log})
}

// Locking is one taker of the node lock.
type Locking struct {
	Root hostfs.Root
	// Role names the taker ("apply", "switch") in the lock file, so a
	// waiting run can say who holds it.
	Role string
	// DropInPath is RKE2's drop-in, whose directory is locked instead when
	// /run cannot hold the lock file: every taker must pass the same one.
	DropInPath string
	Wait       time.Duration
	// WaitFor says whether a holder of role is worth waiting for; nil waits
	// for any. switch waits for an apply (a second at most) but not for
	// another switch, which may hold it for minutes.
	WaitFor func(role string) bool
	Log     func(format string, args ...any)
}

// Lock takes LockFile under the root, waiting at most l.Wait. apply and
// switch share it: whoever holds it may change the node's backend (the
// operator config's backend:, RKE2's drop-in, the plan). When /run cannot
// hold the lock file (read-only), it locks the drop-in's own directory
// instead, which every apply of this node writes too. release unlocks.
func Lock(ctx context.Context, l Locking) (release func(), err error) {
	o := Options{Root: l.Root, Log: l.Log}
	f, what, err := openLock(o, l.DropInPath)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(l.Wait)
	for waiting := false; ; waiting = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", what, err)
		}
		pid, role := holderOf(f)
		if time.Now().After(deadline) || ctx.Err() != nil || (l.WaitFor != nil && role != "" && !l.WaitFor(role)) {
			f.Close()
			return nil, &HeldError{PID: pid, Role: role, What: what, Waited: l.Wait, taker: l.Role}
		}
		if !waiting {
			// Say so at once: a silent wait looks like a hang in the journal.
			o.log("waiting up to %v for another rke2-proxy-backend %s%s holding %s", l.Wait, roleOr(role), pidText(pid), what)
		}
		_ = sleep.Ctx(ctx, lockPoll) // an ended ctx is seen at the loop's top
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		// Name ourselves for the message a waiting run prints.
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+l.Role+"\n"), 0)
	}
	return func() {
		// A pid left in a free lock would name a process long gone.
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			_ = f.Truncate(0)
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// HeldError is a lock another run holds.
type HeldError struct {
	PID    int    // 0 when unknown
	Role   string // "" when unknown
	What   string // the file or directory locked
	Waited time.Duration
	taker  string
}

func (e *HeldError) Error() string {
	if e.taker == "apply" {
		return fmt.Sprintf("another rke2-proxy-backend %s%s still holds %s after %v: this run wrote nothing and left the drop-in to it; "+
			"if no apply is running, find the holder with `fuser -v %s`", roleOr(e.Role), pidText(e.PID), e.What, e.Waited, e.What)
	}
	return fmt.Sprintf("another rke2-proxy-backend %s%s holds %s: this %s changed nothing; wait for it to finish "+
		"(if none is running, find the holder with `fuser -v %s`)", roleOr(e.Role), pidText(e.PID), e.What, e.taker, e.What)
}

func roleOr(role string) string {
	if role == "" {
		return "apply"
	}
	return role
}

func pidText(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// openLock opens (creating) LockFile, or the drop-in's directory when the
// lock file cannot be created because /run is read-only or full.
func openLock(o Options, dropInPath string) (*os.File, string, error) {
	dir, err := o.Root.Resolve(path.Dir(LockFile))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		p := filepath.Join(dir, path.Base(LockFile))
		var f *os.File
		f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			return f, p, nil
		}
	}
	if !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return nil, "", fmt.Errorf("open the apply lock %s: %w", o.Root.Path(LockFile), err)
	}
	o.log("warning: cannot create %s (%v); locking %s instead", o.Root.Path(LockFile), err, path.Dir(dropInPath))
	d, derr := o.Root.Resolve(path.Dir(dropInPath))
	if derr == nil {
		derr = os.MkdirAll(d, 0o755)
	}
	if derr != nil {
		return nil, "", fmt.Errorf("open the apply lock: %w; and its fallback %s: %w", err, path.Dir(dropInPath), derr)
	}
	f, derr := os.Open(d)
	if derr != nil {
		return nil, "", fmt.Errorf("open the apply lock: %w; and its fallback %s: %w", err, d, derr)
	}
	return f, d, nil
}

// holderOf reads "PID ROLE" from the lock file (an older run wrote only
// the pid); zero values when unknown.
func holderOf(f *os.File) (pid int, role string) {
	buf := make([]byte, 64)
	n, _ := f.ReadAt(buf, 0)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) == 0 {
		return 0, ""
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return 0, ""
	}
	if len(fields) > 1 {
		role = fields[1]
	}
	return pid, role
}
