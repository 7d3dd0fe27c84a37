package census

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
)

// Options bound and aim one census.
type Options struct {
	// Proc is where processes are listed ("/proc" when empty). Namespaces
	// are always entered through it, so it must be the running kernel's.
	Proc string
	// PIDs, when set, limits the walk to the processes it accepts (tests
	// limit it to their own; the host is read all the same).
	PIDs func(pid int) bool
	// MaxNamespaces bounds the namespaces entered besides the host's (0:
	// all); the rest are counted as not visited, in process order.
	MaxNamespaces int
}

// nsProcs is one namespace and its processes, lowest pid first: the first
// one that still runs is the way in.
type nsProcs struct {
	inode uint64
	pids  []int
}

// Take reads the host's network namespace and every other one a process
// of o.Proc holds, each once (by the namespace's inode), and judges.
// A process that exits during the walk is skipped; a namespace whose every
// process did is counted Exited. Only a failure to list processes or to
// know the host's own namespace is an error: one namespace's failure is
// that namespace's Error and makes the verdict unknown.
func Take(ctx context.Context, o Options) (*Census, error) {
	proc := o.Proc
	if proc == "" {
		proc = "/proc"
	}
	self, err := nsInode(filepath.Join(proc, "thread-self/ns/net"))
	if err != nil {
		return nil, fmt.Errorf("census: this process's network namespace: %w", err)
	}
	others, err := namespaces(proc, self, o.PIDs)
	if err != nil {
		return nil, err
	}
	c := &Census{Schema: Schema}
	host := Namespace{Where: Where{Inode: self, Host: true}}
	readHere(ctx, &host)
	c.Namespaces = append(c.Namespaces, host)
	for i, ns := range others {
		if o.MaxNamespaces > 0 && i >= o.MaxNamespaces {
			c.NotVisited = len(others) - i
			break
		}
		if err := ctx.Err(); err != nil {
			c.NotVisited = len(others) - i
			break
		}
		n := visit(ctx, proc, ns)
		if n.Exited {
			c.Exited++
			continue
		}
		c.Namespaces = append(c.Namespaces, n)
	}
	c.judge()
	return c, nil
}

// namespaces lists the network namespaces of proc's processes other than
// self, in the order of their lowest pid.
func namespaces(proc string, self uint64, want func(int) bool) ([]nsProcs, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("census: listing processes in %s: %w", proc, err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || (want != nil && !want(pid)) {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	var out []nsProcs
	at := map[uint64]int{}
	for _, pid := range pids {
		ino, err := nsInode(filepath.Join(proc, strconv.Itoa(pid), "ns/net"))
		if err != nil || ino == self {
			continue // exited, a kernel thread's, or the host's own
		}
		i, ok := at[ino]
		if !ok {
			i = len(out)
			at[ino] = i
			out = append(out, nsProcs{inode: ino})
		}
		out[i].pids = append(out[i].pids, pid)
	}
	return out, nil
}

// nsInode is the inode of the namespace a /proc/.../ns/net link names.
func nsInode(link string) (uint64, error) {
	fi, err := os.Stat(link)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no inode", link)
	}
	return st.Ino, nil
}

// visit opens ns through its first process still running (the open file
// keeps the namespace alive even if that process exits now), says where
// the process runs, and reads the namespace from inside.
func visit(ctx context.Context, proc string, ns nsProcs) Namespace {
	n := Namespace{Where: Where{Inode: ns.inode}}
	for _, pid := range ns.pids {
		f, err := os.Open(filepath.Join(proc, strconv.Itoa(pid), "ns/net"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue // exited since the walk saw it
		}
		if err != nil {
			n.PID, n.Error = pid, fmt.Sprintf("opening its network namespace: %v", err)
			return n
		}
		defer f.Close()
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Ino != ns.inode {
			continue // the pid was reused by a process of another namespace
		}
		n.PID = pid
		origin(proc, &n)
		enter(ctx, f, &n)
		return n
	}
	n.Exited = true
	return n
}

// origin fills in the process's name and the unit or pod its cgroup names;
// a process gone by now leaves them empty (the namespace is open already).
func origin(proc string, n *Namespace) {
	dir := filepath.Join(proc, strconv.Itoa(n.PID))
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		n.Comm = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		o := events.ParseCgroup(string(b))
		n.PodUID, n.Container, n.Unit = o.PodUID, o.Container, o.Unit
	}
}
