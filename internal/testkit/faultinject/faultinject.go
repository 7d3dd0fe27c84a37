// Package faultinject runs a program under a small ptrace tracer that
// counts the system calls it makes on paths of interest (writes, renames,
// syncs, unlinks, ...) and can fail the Nth call of a kind with an errno or
// kill the program as it enters it. A clean run lists the calls; a loop
// over that list injects a fault at each one, so a write added to the
// program is covered without editing the test. It is test support only.
//
// Why not strace -e inject=SYSCALL:when=N: strace counts calls per thread,
// and a Go program's calls move between threads (a goroutine resumes on
// another one after a blocking call), so "the Nth write" is not one call
// from run to run; and strace cannot select calls by a path prefix (temp
// files have random names), so an injection also hits the runtime's own
// eventfd writes, which abort the program. This tracer counts per process,
// in the order the calls are made, and only calls on paths under the
// directories it is given.
package faultinject

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Call is one system call of interest a run made.
type Call struct {
	// Class is the kind of change: open (for writing or creating), write,
	// fsync, rename, unlink, mkdir, chmod, chown, utimes, link, truncate.
	Class string
	// N numbers the run's calls of Class, from 1.
	N int
	// Name is the system call (openat, renameat, ...).
	Name string
	// Path is what the call acted on (rename's new name; a directory for a
	// directory's fsync); Old is rename's old name.
	Path, Old string
}

func (c Call) String() string {
	if c.Old != "" {
		return fmt.Sprintf("%s #%d (%s %s -> %s)", c.Class, c.N, c.Name, c.Old, c.Path)
	}
	return fmt.Sprintf("%s #%d (%s %s)", c.Class, c.N, c.Name, c.Path)
}

// Fault is what to do at the Nth call of Class: fail it with Errno
// without running it, or (Kill) kill the program with SIGKILL as it enters
// it, which is a kill right after the call before it.
type Fault struct {
	Class string
	N     int
	Errno syscall.Errno
	Kill  bool
	// Sticky fails every later call of interest too, of any class: the
	// filesystem stays broken (it went read-only, or full) from there.
	Sticky bool
	// Signal, when set, is sent to the program as it enters the call,
	// which then runs: a signal that lands at a point no tool of the
	// program's can be paused in (a switch step that runs in-process).
	Signal syscall.Signal
}

func (f Fault) String() string {
	what := "SIGKILL"
	switch {
	case f.Signal != 0:
		what = f.Signal.String()
	case !f.Kill:
		what = errnoName(f.Errno)
	}
	if f.Sticky {
		what += " from"
	}
	return fmt.Sprintf("%s at %s #%d", what, f.Class, f.N)
}

// Errnos are the errors a loop injects: a full disk, a writeback error,
// a read-only filesystem.
var Errnos = []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EROFS}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EIO:
		return "EIO"
	case syscall.EROFS:
		return "EROFS"
	case syscall.EINVAL:
		return "EINVAL"
	}
	return fmt.Sprintf("errno %d", int(e))
}

// Faults is the loop over a clean run's calls: at each call a kill and
// one errno, taken in turn from Errnos (every errno when all is true).
// Errors of one kind take the same error path in the program; the turn
// still puts each errno at every kind of call over a run.
func Faults(calls []Call, all bool) []Fault {
	var out []Fault
	for i, c := range calls {
		errnos := []syscall.Errno{Errnos[i%len(Errnos)]}
		if all {
			errnos = Errnos
		}
		for _, e := range errnos {
			out = append(out, Fault{Class: c.Class, N: c.N, Errno: e})
		}
		out = append(out, Fault{Class: c.Class, N: c.N, Kill: true})
	}
	return out
}

// Result is one traced run.
type Result struct {
	// Calls are the calls of interest, in order, up to the end (or the
	// kill).
	Calls []Call
	// Injected is the call the fault hit; nil when the run never made it.
	Injected *Call
	// Exit is the exit code; -1 when a signal ended the run (Signal).
	Exit   int
	Signal syscall.Signal
	// Stdout and Stderr are what the program printed.
	Stdout, Stderr string
	// Took is the run's wall time.
	Took time.Duration
}

// Killed reports whether the run ended by SIGKILL.
func (r *Result) Killed() bool { return r.Exit == -1 && r.Signal == syscall.SIGKILL }

// Failed reports whether the run did not end with exit 0.
func (r *Result) Failed() bool { return r.Exit != 0 }

func (r *Result) String() string {
	end := fmt.Sprintf("exit %d", r.Exit)
	if r.Exit == -1 {
		end = "ended by a signal: " + r.Signal.String()
	}
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", end, r.Stdout, r.Stderr)
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// Served is the file the injected call was part of writing: the file a
// temp file becomes (its unlink excepted), a rename's new name, for a directory's sync the file
// last renamed into that directory, else the call's own path ("" when
// nothing was injected).
func (r *Result) Served() string {
	in := r.Injected
	if in == nil {
		return ""
	}
	dir, base := filepath.Dir(in.Path), filepath.Base(in.Path)
	// Unlinking a temp file is a failed write's cleanup, not the write.
	if m := writerTemp.FindStringSubmatch(base); m != nil && in.Class != "unlink" {
		return filepath.Join(dir, m[1])
	}
	if in.Class == "fsync" {
		last := ""
		for _, c := range r.Calls {
			if c.Class == in.Class && c.N == in.N {
				break
			}
			if c.Class == "rename" && filepath.Dir(c.Path) == in.Path {
				last = c.Path
			}
		}
		if last != "" {
			return last
		}
	}
	return in.Path
}

// writerTemp is hostfs.WriteFileAtomic's temp file for NAME.
var writerTemp = regexp.MustCompile(`^\.(.+)\.tmp-[0-9]+$`)
