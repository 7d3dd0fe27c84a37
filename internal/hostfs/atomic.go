package hostfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tempPrefix starts the name of every temp file WriteFileAtomic makes for a
// file called name. The leading dot and the suffix keep it out of RKE2's
// *.yaml glob and systemd's *.conf one.
func tempPrefix(name string) string { return "." + name + ".tmp-" }

// RemoveStaleTemps removes the temp files WriteFileAtomic left next to
// hostPath when a writer was killed between creating and renaming one (a
// kill -9, a power cut). A live writer's temp looks the same, so the caller
// must hold the lock every writer of hostPath takes (apply's lock for the
// RKE2 drop-in and the plan): then any temp there has no writer left. Only
// regular files are removed. It returns the paths removed.
func (r Root) RemoveStaleTemps(hostPath string) ([]string, error) {
	dir, err := r.Resolve(filepath.Dir(filepath.Clean("/" + hostPath)))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s for stale temporary files: %w", dir, err)
	}
	prefix := tempPrefix(filepath.Base(hostPath))
	var removed []string
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stale temporary file %s: %w", p, err))
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// RemoveFile removes hostPath under the root, a file that was there or
// not: the name itself is removed, never what a symlink there points to.
// The removal is durable: its directory is synced after the unlink, so a
// power cut cannot bring the file back (a switch journal or a drop-in
// coming back would undo what the caller reported done). An error is any
// other than the file's absence, naming the path.
func (r Root) RemoveFile(hostPath string) error {
	p, err := r.ResolveEntry(hostPath)
	if err == nil {
		err = os.Remove(p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", r.Path(hostPath), err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("removed %s, but it may come back after a power cut: %w", r.Path(hostPath), err)
	}
	return nil
}

// WriteFileAtomic writes data to hostPath under the root so that a reader
// (or a crash) sees either the old file or the whole new one: temp file in
// the same directory, fsync, rename, fsync the directory. The final path
// component is never followed if it is a symlink: rename replaces the link
// itself, so a planted link cannot redirect the write out of the directory.
// When the file already holds exactly data with the same mode, its bytes
// are not rewritten (no new mtime, which keeps repeated runs idempotent),
// but the file and its directory are still synced: a rename an earlier
// run could not make durable is not reported unchanged and done.
// It reports whether the file changed; an error after the rename (the
// directory's sync) comes with true: the new bytes are in place but may
// not survive a power cut, and the caller must not report success.
func (r Root) WriteFileAtomic(hostPath string, data []byte, perm os.FileMode) (bool, error) {
	return r.write(hostPath, data, perm, nil, true)
}

// AdvanceFileAtomic is WriteFileAtomic for a record whose version before
// this write is as good as this one after a power cut (a journal's later
// step, when resuming from the earlier one is also right): the new bytes
// are synced before the rename, so a crash leaves the old file or the
// whole new one, never a torn one, but the directory is not synced, so
// the rename itself may be undone. It saves the directory's sync (a
// journal commit on ext4) where losing the rename loses nothing.
func (r Root) AdvanceFileAtomic(hostPath string, data []byte, perm os.FileMode) (bool, error) {
	return r.write(hostPath, data, perm, nil, false)
}

// Owner is a file's numeric owner and group.
type Owner struct{ UID, GID int }

// WriteFileAtomicAs is WriteFileAtomic for a file that must keep owner (an
// operator's file the tool rewrites): the temp file gets the owner before
// it is synced and renamed, so the file never exists with ours, and the
// owner is as durable as the bytes. An unchanged file with another owner
// is rewritten.
func (r Root) WriteFileAtomicAs(hostPath string, data []byte, perm os.FileMode, owner Owner) (bool, error) {
	return r.write(hostPath, data, perm, &owner, true)
}

func (r Root) write(hostPath string, data []byte, perm os.FileMode, owner *Owner, durable bool) (bool, error) {
	dir, err := r.Resolve(filepath.Dir(filepath.Clean("/" + hostPath)))
	if err != nil {
		return false, err
	}
	final := filepath.Join(dir, filepath.Base(hostPath))
	if same, err := holds(final, data, perm, owner, durable); same || err != nil {
		return false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(filepath.Base(hostPath))+"*")
	if err != nil {
		return false, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	if err := writeSync(tmp, data, perm, owner); err != nil {
		os.Remove(tmpName)
		return false, fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := os.Rename(tmpName, final); err != nil {
		os.Remove(tmpName)
		return false, fmt.Errorf("rename %s to %s: %w", tmpName, final, err)
	}
	if !durable {
		return true, nil
	}
	if err := syncDir(dir); err != nil {
		return true, fmt.Errorf("wrote %s, but it may not survive a power cut: %w", final, err)
	}
	return true, nil
}

// holds reports whether final is already a regular file holding exactly
// data with perm (and owner, when given), synced with its directory. A
// file that differs, or is missing, is no error: the caller writes it. A
// sync that fails is: the bytes there may not be on disk.
func holds(final string, data []byte, perm os.FileMode, owner *Owner, durable bool) (bool, error) {
	f, err := os.OpenFile(final, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0) // a FIFO planted there must not block
	if err != nil {
		return false, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != perm || fi.Size() != int64(len(data)) {
		return false, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); owner != nil && (!ok || int(st.Uid) != owner.UID || int(st.Gid) != owner.GID) {
		return false, nil
	}
	old := make([]byte, len(data)+1)
	n, _ := io.ReadFull(f, old)
	if n != len(data) || !bytes.Equal(old[:n], data) {
		return false, nil
	}
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EROFS) {
		return false, fmt.Errorf("sync %s: %w", final, err)
	}
	if !durable {
		return true, nil
	}
	if err := syncDir(filepath.Dir(final)); err != nil && !errors.Is(err, syscall.EROFS) {
		return false, fmt.Errorf("%s holds the bytes, but they may not survive a power cut: %w", final, err)
	}
	return true, nil
}

// syncDir makes dir's entries (a rename, an unlink) durable. EINVAL is the
// answer of filesystems that do not sync directories at all (nothing more
// can be done there); any other error, EIO above all, is a writeback
// failure: the change may be lost, and is reported.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

func writeSync(f *os.File, data []byte, perm os.FileMode, owner *Owner) error {
	err := f.Chmod(perm)
	if err == nil && owner != nil {
		err = f.Chown(owner.UID, owner.GID)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
