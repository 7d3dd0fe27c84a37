package hostfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Under a root other than "/", the reads (Stat, Exists, ReadFileMax,
// ReadDirMax, Readlink) let the kernel resolve the host path the way
// Resolve does: openat2(2) with RESOLVE_IN_ROOT treats the root's
// directory as "/" for the whole lookup, so an absolute link restarts at
// the root and ".." stops there, in one call where Resolve's walk asks
// readlink of every component (a fixture run of the generator did 270 of
// them, most failing). It is as contained as the walk and more: the walk
// resolves a path and then opens it by name, the kernel resolves and opens
// in one step, so a link swapped in between cannot lead out. Magic links
// (/proc/PID/fd/N inside a root) are refused, as the walk could not
// follow them either. On "/" none of this runs: the kernel's own
// resolution is the host's, and Resolve returns the path as it is.
//
// Kernels before 5.6 have no openat2 and some seccomp filters refuse it;
// then every read walks as before (noOpenat2 remembers, so it is asked once).
var noOpenat2 atomic.Bool

// inRootTries bounds the retries of a lookup the kernel gave up on because
// a rename or mount raced with a ".." in it (EAGAIN); then the walk runs.
const inRootTries = 3

// openIn opens hostPath under the root with flags and the kernel's
// resolution; used is false when openat2 cannot be used (the caller walks
// instead). Its errors are the system call's (the caller names the path).
func (r Root) openIn(hostPath string, flags int) (fd int, used bool, err error) {
	err = r.inRoot(func(at func(string, int) (int, error)) error {
		fd, err = at(hostPath, flags)
		return err
	})
	return fd, err != errWalk, err
}

// errWalk says openat2 cannot be used: walk instead.
var errWalk = errors.New("openat2 unavailable")

// inRoot runs fn with an opener of host paths under the root (as openIn's),
// opening the root's directory once for all of fn's opens. It returns
// errWalk when openat2 cannot be used, before or in fn.
func (r Root) inRoot(fn func(at func(hostPath string, flags int) (int, error)) error) error {
	if noOpenat2.Load() {
		return errWalk
	}
	rootFD, err := openDir(r.dir)
	if err != nil {
		return err
	}
	defer syscall.Close(rootFD)
	return fn(func(hostPath string, flags int) (int, error) {
		how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		for range inRootTries {
			fd, err := unix.Openat2(rootFD, path.Clean("/"+hostPath), &how)
			switch {
			case err == nil:
				return fd, nil
			case err == unix.EINTR || err == unix.EAGAIN:
				continue
			case err == unix.ENOSYS || err == unix.EPERM:
				// No openat2, or a filter refuses it (a file's own
				// EPERM is rare, and the walk says it too).
				noOpenat2.Store(true)
				return -1, errWalk
			}
			return -1, err
		}
		return -1, errWalk
	})
}

// openDir opens a directory for use as a lookup's starting point only.
func openDir(dir string) (int, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// statIn is Stat under a root other than "/"; used as in openIn.
func (r Root) statIn(hostPath string) (fi fs.FileInfo, used bool, err error) {
	fd, used, err := r.openIn(hostPath, unix.O_PATH)
	if !used {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: r.Path(hostPath), Err: err}
	}
	// os.File's Stat is fstat with the name given here (the path's own, as
	// os.Stat's and Stat's on "/"), Sys the *syscall.Stat_t.
	f := os.NewFile(uintptr(fd), path.Base(path.Clean("/"+hostPath)))
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: r.Path(hostPath), Err: errors.Unwrap(err)}
	}
	return fi, true, nil
}

// readlinkIn is Readlink under a root other than "/": the directory is
// resolved in the root, the last component is read, not followed.
func (r Root) readlinkIn(hostPath string) (target string, used bool, err error) {
	clean := path.Clean("/" + hostPath)
	dirFD, used, err := r.openIn(path.Dir(clean), unix.O_PATH|unix.O_DIRECTORY)
	if !used {
		return "", false, nil
	}
	if err == nil {
		defer syscall.Close(dirFD)
		var buf [unix.PathMax]byte // the longest target the kernel stores, less its NUL
		var n int
		if err = ignoringEINTR(func() (err error) { n, err = unix.Readlinkat(dirFD, path.Base(clean), buf[:]); return err }); err == nil {
			return string(buf[:n]), true, nil
		}
	}
	return "", true, &fs.PathError{Op: "readlinkat", Path: r.Path(hostPath), Err: err}
}
