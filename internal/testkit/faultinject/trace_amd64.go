//go:build linux && amd64

package faultinject

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Supported says whether Trace works here (linux/amd64).
const Supported = true

// Trace runs cmd (not yet started, Stdout and Stderr unset) under the
// tracer. Calls on paths inside one of within (absolute paths without
// symlinks) are counted; fault, when not nil, is injected at its call.
// Only the program's own threads are traced, not the programs it runs.
// The run is killed after limit. Trace waits for the program itself: no
// other child of the calling process may end while it runs (it reaps with
// wait4(-1)), so callers run one Trace at a time and nothing beside it.
func Trace(cmd *exec.Cmd, within []string, fault *Fault, limit time.Duration) (*Result, error) {
	// ptrace requests must come from the thread that started the tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	stdout, err := os.CreateTemp("", "faultinject-stdout-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "faultinject-stderr-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	tr := &tracer{pid: cmd.Process.Pid, within: within, fault: fault, counts: map[string]int{}, threads: map[int]*thread{}}
	timer := time.AfterFunc(limit, func() { syscall.Kill(tr.pid, syscall.SIGKILL) })
	defer timer.Stop()
	res, err := tr.run()
	if err != nil {
		syscall.Kill(tr.pid, syscall.SIGKILL)
		return nil, err
	}
	res.Took = time.Since(start)
	if res.Took >= limit {
		return nil, fmt.Errorf("%s: still running after %s, killed\n%s", cmd.Path, limit, readBack(stderr))
	}
	res.Stdout, res.Stderr = readBack(stdout), readBack(stderr)
	return res, nil
}

func readBack(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

type tracer struct {
	pid     int
	within  []string
	fault   *Fault
	counts  map[string]int
	threads map[int]*thread
	res     Result
}

type thread struct {
	seen      bool          // its first stop came (a new thread's is a SIGSTOP)
	inSyscall bool          // between a syscall's entry and exit stops
	errno     syscall.Errno // to return at the exit stop (injected)
}

const (
	ptraceOptions = syscall.PTRACE_O_TRACESYSGOOD | syscall.PTRACE_O_TRACECLONE | 0x100000 // PTRACE_O_EXITKILL
	syscallStop   = syscall.SIGTRAP | 0x80
)

func (t *tracer) run() (*Result, error) {
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(t.pid, &ws, syscall.WALL, nil); err != nil {
		return nil, fmt.Errorf("wait for the traced program to start: %w", err)
	}
	if !ws.Stopped() {
		return nil, fmt.Errorf("the traced program did not stop at its exec (%v)", ws)
	}
	if err := syscall.PtraceSetOptions(t.pid, ptraceOptions); err != nil {
		return nil, fmt.Errorf("ptrace options: %w", err)
	}
	t.threads[t.pid] = &thread{seen: true}
	if err := syscall.PtraceSyscall(t.pid, 0); err != nil {
		return nil, fmt.Errorf("ptrace: %w", err)
	}
	for {
		tid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("wait for the traced program: %w", err)
		}
		th := t.threads[tid]
		if th == nil {
			// A new thread can stop before its parent's clone event.
			th = &thread{}
			t.threads[tid] = th
		}
		switch {
		case ws.Exited() || ws.Signaled():
			delete(t.threads, tid)
			if tid != t.pid {
				continue
			}
			t.res.Exit = ws.ExitStatus()
			if ws.Signaled() {
				t.res.Exit, t.res.Signal = -1, ws.Signal()
			}
			for other := range t.threads {
				syscall.Wait4(other, &ws, syscall.WALL, nil)
			}
			return &t.res, nil
		case !ws.Stopped():
			continue
		}
		sig := ws.StopSignal()
		switch {
		case sig == syscallStop:
			t.syscallStop(tid, th)
			sig = 0
		case sig == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_CLONE:
			if msg, err := syscall.PtraceGetEventMsg(tid); err == nil && t.threads[int(msg)] == nil {
				t.threads[int(msg)] = &thread{}
			}
			sig = 0
		case sig == syscall.SIGSTOP && !th.seen:
			sig = 0
		}
		th.seen = true
		// A thread killed meanwhile (the injected SIGKILL) is no error.
		_ = syscall.PtraceSyscall(tid, int(sig))
	}
}

func (t *tracer) syscallStop(tid int, th *thread) {
	var regs syscall.PtraceRegs
	if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
		return
	}
	if th.inSyscall {
		th.inSyscall = false
		if th.errno != 0 {
			regs.Rax = uint64(-int64(th.errno))
			_ = syscall.PtraceSetRegs(tid, &regs)
			th.errno = 0
		}
		return
	}
	th.inSyscall = true
	c, ok := decode(tid, &regs)
	if !ok || !(under(c.Path, t.within) || c.Old != "" && under(c.Old, t.within)) {
		return
	}
	t.counts[c.Class]++
	c.N = t.counts[c.Class]
	t.res.Calls = append(t.res.Calls, c)
	f := t.fault
	hit := f != nil && f.Class == c.Class && f.N == c.N
	if hit {
		t.res.Injected = &c
	}
	if !hit && (t.res.Injected == nil || !f.Sticky) {
		return
	}
	if f.Signal != 0 {
		syscall.Kill(t.pid, f.Signal)
		return
	}
	if f.Kill {
		// Pending SIGKILL: the kernel ends the thread group before the
		// call runs.
		syscall.Kill(t.pid, syscall.SIGKILL)
		return
	}
	regs.Orig_rax = ^uint64(0) // no such call: the kernel skips it
	if syscall.PtraceSetRegs(tid, &regs) == nil {
		th.errno = f.Errno
	}
}

const atFDCWD = -100

// cwd is AT_FDCWD as a register holds it.
const cwd = uint64(1<<64 - 100)

// decode names a call of interest and the path it acts on.
func decode(tid int, r *syscall.PtraceRegs) (Call, bool) {
	a := [4]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10}
	str := func(i int) string { return peekString(tid, uintptr(a[i])) }
	at := func(dirfd uint64, p string) string { return resolveAt(tid, int(int32(dirfd)), p) }
	fd := func(i int) string { return fdPath(tid, int(int32(a[i]))) }
	const writing = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_CREAT | syscall.O_TRUNC
	switch r.Orig_rax {
	case syscall.SYS_OPENAT:
		if a[2]&writing == 0 {
			return Call{}, false
		}
		return Call{Class: "open", Name: "openat", Path: at(a[0], str(1))}, true
	case syscall.SYS_OPEN:
		if a[1]&writing == 0 {
			return Call{}, false
		}
		return Call{Class: "open", Name: "open", Path: at(cwd, str(0))}, true
	case syscall.SYS_CREAT:
		return Call{Class: "open", Name: "creat", Path: at(cwd, str(0))}, true
	case syscall.SYS_WRITE, syscall.SYS_PWRITE64, syscall.SYS_WRITEV, syscall.SYS_PWRITEV:
		return Call{Class: "write", Name: callName(r.Orig_rax), Path: fd(0)}, true
	case syscall.SYS_FSYNC, syscall.SYS_FDATASYNC, syscall.SYS_SYNC_FILE_RANGE:
		return Call{Class: "fsync", Name: callName(r.Orig_rax), Path: fd(0)}, true
	case syscall.SYS_RENAME:
		return Call{Class: "rename", Name: "rename", Old: at(cwd, str(0)), Path: at(cwd, str(1))}, true
	case syscall.SYS_RENAMEAT, 316: // renameat2
		return Call{Class: "rename", Name: callName(r.Orig_rax), Old: at(a[0], str(1)), Path: at(a[2], str(3))}, true
	case syscall.SYS_UNLINK, syscall.SYS_RMDIR:
		return Call{Class: "unlink", Name: callName(r.Orig_rax), Path: at(cwd, str(0))}, true
	case syscall.SYS_UNLINKAT:
		return Call{Class: "unlink", Name: "unlinkat", Path: at(a[0], str(1))}, true
	case syscall.SYS_MKDIR:
		return Call{Class: "mkdir", Name: "mkdir", Path: at(cwd, str(0))}, true
	case syscall.SYS_MKDIRAT:
		return Call{Class: "mkdir", Name: "mkdirat", Path: at(a[0], str(1))}, true
	case syscall.SYS_FCHMOD:
		return Call{Class: "chmod", Name: "fchmod", Path: fd(0)}, true
	case syscall.SYS_CHMOD:
		return Call{Class: "chmod", Name: "chmod", Path: at(cwd, str(0))}, true
	case syscall.SYS_FCHMODAT:
		return Call{Class: "chmod", Name: "fchmodat", Path: at(a[0], str(1))}, true
	case syscall.SYS_FCHOWN:
		return Call{Class: "chown", Name: "fchown", Path: fd(0)}, true
	case syscall.SYS_CHOWN, syscall.SYS_LCHOWN:
		return Call{Class: "chown", Name: callName(r.Orig_rax), Path: at(cwd, str(0))}, true
	case syscall.SYS_FCHOWNAT:
		return Call{Class: "chown", Name: "fchownat", Path: at(a[0], str(1))}, true
	case syscall.SYS_UTIMENSAT:
		if a[1] == 0 {
			return Call{Class: "utimes", Name: "utimensat", Path: fd(0)}, true
		}
		return Call{Class: "utimes", Name: "utimensat", Path: at(a[0], str(1))}, true
	case syscall.SYS_SYMLINK, syscall.SYS_LINK:
		return Call{Class: "link", Name: callName(r.Orig_rax), Path: at(cwd, str(1))}, true
	case syscall.SYS_SYMLINKAT:
		return Call{Class: "link", Name: "symlinkat", Path: at(a[1], str(2))}, true
	case syscall.SYS_LINKAT:
		return Call{Class: "link", Name: "linkat", Path: at(a[2], str(3))}, true
	case syscall.SYS_FTRUNCATE:
		return Call{Class: "truncate", Name: "ftruncate", Path: fd(0)}, true
	case syscall.SYS_TRUNCATE:
		return Call{Class: "truncate", Name: "truncate", Path: at(cwd, str(0))}, true
	}
	return Call{}, false
}

func callName(nr uint64) string {
	switch nr {
	case syscall.SYS_WRITE:
		return "write"
	case syscall.SYS_PWRITE64:
		return "pwrite64"
	case syscall.SYS_WRITEV:
		return "writev"
	case syscall.SYS_PWRITEV:
		return "pwritev"
	case syscall.SYS_FSYNC:
		return "fsync"
	case syscall.SYS_FDATASYNC:
		return "fdatasync"
	case syscall.SYS_SYNC_FILE_RANGE:
		return "sync_file_range"
	case syscall.SYS_RENAMEAT:
		return "renameat"
	case 316:
		return "renameat2"
	case syscall.SYS_UNLINK:
		return "unlink"
	case syscall.SYS_RMDIR:
		return "rmdir"
	case syscall.SYS_CHOWN:
		return "chown"
	case syscall.SYS_LCHOWN:
		return "lchown"
	case syscall.SYS_SYMLINK:
		return "symlink"
	case syscall.SYS_LINK:
		return "link"
	}
	return "syscall " + strconv.FormatUint(nr, 10)
}

// fdPath is what fd of thread tid refers to ("" for none).
func fdPath(tid, fd int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", tid, fd))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, " (deleted)")
}

// resolveAt is p as the kernel reads it relative to dirfd.
func resolveAt(tid, dirfd int, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	var base string
	if dirfd == atFDCWD {
		base, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", tid))
	} else {
		base = fdPath(tid, dirfd)
	}
	return filepath.Join(base, p)
}

// peekString reads a NUL-terminated string of at most 4 KiB from tid's
// memory, a word at a time (a longer read could cross into an unmapped
// page).
func peekString(tid int, addr uintptr) string {
	var out []byte
	buf := make([]byte, 8)
	for len(out) < 4096 {
		n, err := syscall.PtracePeekData(tid, addr+uintptr(len(out)), buf)
		if err != nil || n == 0 {
			break
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...))
		}
		out = append(out, buf[:n]...)
	}
	return string(out)
}
