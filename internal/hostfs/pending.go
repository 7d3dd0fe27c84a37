package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Pending is a run's mark that it has started and not yet stored its
// result: a marker file that exists from BeginPending to Done, on which the
// running process holds a lock while it lives. A reader that finds the
// marker unlocked knows a run ended without storing its result (killed,
// or its write failed), whatever the result file beside it still says.
// Creating, locking and unlinking an empty file need no data blocks, so
// the mark works on a full filesystem, where the result itself cannot be
// written. The locks are open file description locks: a reader tests
// them without taking one (F_OFD_GETLK), so it never delays a writer,
// and several runs may hold the mark at once (read locks); the last to
// finish removes it.
type Pending struct {
	f    *os.File
	path string
}

// BeginPending creates (or joins) the marker at hostPath and holds it until
// Done or Close. A marker it creates appears at the path already locked
// (made under a temporary name, locked, then linked into place): a reader
// never finds a run's new mark unlocked and takes it for a killed run's.
func (r Root) BeginPending(hostPath string) (*Pending, error) {
	p, err := r.ResolveEntry(hostPath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("mark a run in progress: %w", err)
	}
	for try := 0; try < 5; try++ {
		f, err := createLocked(p)
		if errors.Is(err, fs.ErrExist) {
			f, err = joinLocked(p)
		}
		if err != nil {
			return nil, fmt.Errorf("mark a run in progress: %w", err)
		}
		// A run that was finishing may have unlinked the file between
		// the open and the lock: a mark on a file no longer at the path
		// marks nothing.
		if same(f, p) {
			// "Since when", for the reader's message.
			now := unix.NsecToTimeval(time.Now().UnixNano())
			_ = unix.Futimes(int(f.Fd()), []unix.Timeval{now, now})
			return &Pending{f: f, path: p}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("mark a run in progress: %s keeps being replaced", p)
}

// createLocked makes the marker at p with this run's lock already on it,
// or says fs.ErrExist when another run's marker is there. The temporary
// name is gone before it returns; one a run killed in between leaves is
// removed with the other temps by the last run to finish (StoreRun).
func createLocked(p string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(p), tempPrefix(filepath.Base(p)))
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if err := lock(f, unix.F_OFD_SETLK, unix.F_RDLCK); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Link(f.Name(), p); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// joinLocked opens another run's marker at p and takes a read lock on it
// beside that run's.
func joinLocked(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := lock(f, unix.F_OFD_SETLKW, unix.F_RDLCK); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	return f, nil
}

// Done removes the mark once the run's result is stored: unless another
// run still holds it (that one removes it when it is done). The last run
// to finish calls alone first (nil: nothing), while no other run can be
// under way: the time to remove what killed runs left (their temp files),
// which a live run's could not be told from.
func (p *Pending) Done(alone func() error) error {
	defer p.f.Close()
	if err := lock(p.f, unix.F_OFD_SETLK, unix.F_WRLCK); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil
		}
		return fmt.Errorf("finish the run's mark %s: %w", p.path, err)
	}
	if !same(p.f, p.path) {
		return nil
	}
	if alone != nil {
		if err := alone(); err != nil {
			return err
		}
	}
	// No directory sync: the mark is per boot (/run), and a mark that
	// comes back after a power cut only says "unknown", the safe side.
	if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("finish the run's mark: %w", err)
	}
	return nil
}

// Close lets go of the mark and leaves it: the run did not store its
// result, and readers are to say so.
func (p *Pending) Close() { p.f.Close() }

// PendingSince reads the marker at hostPath: when the last run that holds
// or held it began, and whether a live process still holds it. No marker
// is fs.ErrNotExist.
func (r Root) PendingSince(hostPath string) (since time.Time, running bool, err error) {
	p, err := r.ResolveEntry(hostPath)
	if err != nil {
		return time.Time{}, false, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return time.Time{}, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, false, err
	}
	if !fi.Mode().IsRegular() {
		return time.Time{}, false, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	l := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &l); err != nil {
		return time.Time{}, false, fmt.Errorf("test the lock on %s: %w", p, err)
	}
	if l.Type == unix.F_UNLCK && !same(f, p) {
		// The last run finished (Done unlinks, then lets go) between
		// the open and the test: the file tested is no longer the mark.
		return time.Time{}, false, fs.ErrNotExist
	}
	return fi.ModTime(), l.Type != unix.F_UNLCK, nil
}

func lock(f *os.File, cmd int, typ int16) error {
	for {
		err := unix.FcntlFlock(f.Fd(), cmd, &unix.Flock_t{Type: typ})
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// same reports whether f is still the file at p.
func same(f *os.File, p string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(p)
	return err == nil && os.SameFile(a, b)
}
