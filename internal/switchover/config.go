package switchover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
)

// maxConfig bounds the read of the operator config (config.Load reads it
// with the same kind of cap).
const maxConfig = 1 << 20

// FileConfig edits the operator config file under a root. A config that
// is a symlink (config management often links it into a checkout) stays
// one: the switch writes the file the link points at, never the link.
type FileConfig struct {
	Root hostfs.Root
	File string // host path, e.g. hostfs.ConfigFile
}

func (c FileConfig) Describe() string { return c.File }

// Snapshot reads the file as it is before the switch: its bytes, mode and
// owner, and the link it is, if it is one. The journal records it; Set and
// Restore work from that record only, never from the file as it is then.
func (c FileConfig) Snapshot() (switchjournal.Snapshot, error) {
	snap := switchjournal.Snapshot{Path: c.File}
	fi, err := os.Lstat(c.Root.Path(c.File))
	if errors.Is(err, fs.ErrNotExist) {
		return snap, nil
	}
	if err != nil {
		return snap, fmt.Errorf("read %s: %w", c.File, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if snap.Link, err = c.Root.Readlink(c.File); err != nil {
			return snap, fmt.Errorf("read the link %s: %w", c.File, err)
		}
		if _, err := c.target(); err != nil {
			return snap, err
		}
	}
	data, err := c.Root.ReadFileMax(c.File, maxConfig)
	if errors.Is(err, fs.ErrNotExist) && snap.Link != "" {
		return snap, fmt.Errorf("%s is a symlink to %s, which does not exist: point it at a file (or remove the link), then switch again", c.File, snap.Link)
	}
	if err != nil {
		return snap, fmt.Errorf("read %s: %w", c.File, err)
	}
	st, err := c.Root.Stat(c.File)
	if err != nil {
		return snap, fmt.Errorf("stat %s: %w", c.File, err)
	}
	snap.Existed, snap.Data, snap.Mode = true, data, uint32(st.Mode().Perm())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		snap.UID, snap.GID = int(sys.Uid), int(sys.Gid)
	}
	return snap, nil
}

// Set writes backend: b into the config, computed from snap (the
// original), atomically, keeping mode and owner. A file that did not exist
// is created with that one line.
func (c FileConfig) Set(snap switchjournal.Snapshot, b backend.Backend) error {
	out, err := SetBackend(snap.Data, string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	if !snap.Existed {
		_, err := c.Root.WriteFileAtomic(c.File, out, 0o644)
		return err
	}
	return c.write(snap, out)
}

// Restore puts back what the snapshot recorded: the same bytes, mode and
// owner; the same link to the same target; or no file at all.
func (c FileConfig) Restore(snap switchjournal.Snapshot) error {
	if !snap.Existed {
		if err := c.Root.RemoveFile(c.File); err != nil {
			return fmt.Errorf("remove %s, which did not exist before the switch: %w", c.File, err)
		}
		return nil
	}
	if err := c.write(snap, snap.Data); err != nil {
		return fmt.Errorf("restore %s (its previous content is in %s): %w", c.File, hostfs.SwitchJournal, err)
	}
	return nil
}

// write puts data where snap's file is: into the link's target when it was
// a link (relinking first if the link was replaced meanwhile), else in
// place of the file.
func (c FileConfig) write(snap switchjournal.Snapshot, data []byte) error {
	where := c.File
	if snap.Link != "" {
		if err := c.relink(snap.Link); err != nil {
			return err
		}
		t, err := c.target()
		if err != nil {
			return err
		}
		where = t
	}
	// The owner the operator's file had goes on the temp before its fsync
	// and rename, so the file is never seen, or left after a power cut,
	// owned by root.
	if _, err := c.Root.WriteFileAtomicAs(where, data, fs.FileMode(snap.Mode), hostfs.Owner{UID: snap.UID, GID: snap.GID}); err != nil {
		return fmt.Errorf("write %s: %w", where, err)
	}
	return nil
}

// relink makes c.File the symlink to target again when it is not,
// atomically (a link at a temp name, renamed over whatever is there).
func (c FileConfig) relink(target string) error {
	if got, err := c.Root.Readlink(c.File); err == nil && got == target {
		return nil
	}
	p, tmp := c.Root.Path(c.File), c.Root.Path(linkTemp(c.File))
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("recreate the link %s -> %s: %w", c.File, target, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recreate the link %s -> %s: %w", c.File, target, err)
	}
	return nil
}

// target is the host path the link c.File resolves to, inside the root.
// On the host Root.Resolve leaves links to the kernel, so it is asked here:
// a path that still names the link would have the write replace the link.
func (c FileConfig) target() (string, error) {
	if c.Root.IsHost() {
		p, err := filepath.EvalSymlinks(c.File)
		if err != nil {
			return "", fmt.Errorf("follow the link %s: %w", c.File, err)
		}
		return p, nil
	}
	p, err := c.Root.Resolve(c.File)
	if err != nil {
		return "", fmt.Errorf("follow the link %s: %w", c.File, err)
	}
	rel, err := filepath.Rel(c.Root.Dir(), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("the link %s leads out of %s", c.File, c.Root.Dir())
	}
	return "/" + rel, nil
}

// FilePlan is this boot's plan.json under a root, kept for a rollback.
type FilePlan struct {
	Root hostfs.Root
}

func (p FilePlan) Read() ([]byte, error) {
	data, err := p.Root.ReadFileMax(hostfs.PlanFile, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", hostfs.PlanFile, err)
	}
	return data, nil
}

// Restore writes data back as plan.json. The caller holds the node lock,
// as apply does when it writes the plan.
func (p FilePlan) Restore(data []byte) error {
	if _, err := p.Root.WriteFileAtomic(hostfs.PlanFile, data, plan.Mode); err != nil {
		return fmt.Errorf("restore %s: %w", hostfs.PlanFile, err)
	}
	return nil
}
