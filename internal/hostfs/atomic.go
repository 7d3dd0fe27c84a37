package hostfs

import (
	"bytes"
	"errors"
	"fmt"
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
// An error is any other than its absence, naming the path.
func (r Root) RemoveFile(hostPath string) error {
	p, err := r.ResolveEntry(hostPath)
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", r.Path(hostPath), err)
	}
	return nil
}

// WriteFileAtomic writes data to hostPath under the root so that a reader
// (or a crash) sees either the old file or the whole new one: temp file in
// the same directory, fsync, rename, fsync the directory. The final path
// component is never followed if it is a symlink: rename replaces the link
// itself, so a planted link cannot redirect the write out of the directory.
// When the file already holds exactly data with the same mode, nothing is
// touched (no new mtime), which keeps repeated runs idempotent.
// It reports whether the file changed.
func (r Root) WriteFileAtomic(hostPath string, data []byte, perm os.FileMode) (bool, error) {
	dir, err := r.Resolve(filepath.Dir(filepath.Clean("/" + hostPath)))
	if err != nil {
		return false, err
	}
	final := filepath.Join(dir, filepath.Base(hostPath))
	if fi, err := os.Lstat(final); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == perm {
		if old, err := os.ReadFile(final); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(filepath.Base(hostPath))+"*")
	if err != nil {
		return false, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op after a successful rename
	if err := writeSync(tmp, data, perm); err != nil {
		return false, fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := os.Rename(tmpName, final); err != nil {
		return false, fmt.Errorf("rename %s to %s: %w", tmpName, final, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: some filesystems refuse fsync on directories
		d.Close()
	}
	return true, nil
}

func writeSync(f *os.File, data []byte, perm os.FileMode) error {
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
