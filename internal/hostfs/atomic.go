package hostfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

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
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(hostPath)+".tmp-*")
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
