package switchover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// BackupSuffix names the copy of the operator config taken before a
// switch, next to it: an operator whose node lost power mid-switch finds
// the old content there.
const BackupSuffix = ".before-switch"

// maxConfig bounds the read of the operator config (config.Load reads it
// with the same kind of cap).
const maxConfig = 1 << 20

// FileConfig edits the operator config file under a root.
type FileConfig struct {
	Root hostfs.Root
	File string // host path, e.g. hostfs.ConfigFile
}

func (c FileConfig) Describe() string {
	return c.File + " (previous content kept in " + c.File + BackupSuffix + ")"
}

// Set writes backend: b into the file, atomically, after saving the old
// content as the backup. An absent file is created with that one line.
func (c FileConfig) Set(b backend.Backend) (Snapshot, error) {
	var snap Snapshot
	data, err := c.Root.ReadFileMax(c.File, maxConfig)
	switch {
	case err == nil:
		snap = Snapshot{Existed: true, Data: data}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return snap, fmt.Errorf("read %s: %w", c.File, err)
	}
	out, err := SetBackend(snap.Data, string(b))
	if err != nil {
		return snap, fmt.Errorf("%s: %w", c.File, err)
	}
	perm := c.perm()
	if snap.Existed {
		if _, err := c.Root.WriteFileAtomic(c.File+BackupSuffix, snap.Data, perm); err != nil {
			return snap, fmt.Errorf("keep the previous %s: %w", c.File, err)
		}
	}
	if _, err := c.Root.WriteFileAtomic(c.File, out, perm); err != nil {
		return snap, fmt.Errorf("write %s: %w", c.File, err)
	}
	return snap, nil
}

// Restore puts back what Set found: the old bytes, or no file at all.
func (c FileConfig) Restore(s Snapshot) error {
	if !s.Existed {
		if err := os.Remove(c.Root.Path(c.File)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, which did not exist before the switch: %w", c.File, err)
		}
		return nil
	}
	if _, err := c.Root.WriteFileAtomic(c.File, s.Data, c.perm()); err != nil {
		return fmt.Errorf("restore %s (its previous content is in %s): %w", c.File, c.File+BackupSuffix, err)
	}
	return nil
}

// perm keeps the file's mode; a new file gets 0644 like the packaged one.
func (c FileConfig) perm() os.FileMode {
	if fi, err := c.Root.Stat(c.File); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}
