// Package hostfs is the one place that knows where things live on a host.
// Every path the tool reads or writes goes through a Root, so tests (and the
// generator's --root) can point the whole program at a fixture tree, and a
// symlink inside that tree can never lead a read or write outside it.
package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvRoot overrides the default root, like --root.
const EnvRoot = "RKE2_PROXY_BACKEND_ROOT"

// DefaultRoot is --root's default: EnvRoot when set, else the real root.
// The generator's fast path and the command tree both start from it.
func DefaultRoot() string {
	if r := os.Getenv(EnvRoot); r != "" {
		return r
	}
	return "/"
}

// EnvDecision is set by the generator's drop-in in RKE2's unit environment
// so operators can see the decision with `systemctl show -p Environment`.
// It lives beside EnvRoot because both the drop-in writer (units) and the
// config loader (which must not read it as a key) name it, and neither is
// the other's to import.
const EnvDecision = "RKE2_PROXY_BACKEND_DECISION"

// maxSymlinks bounds symlink resolution the way the kernel does (ELOOP).
const maxSymlinks = 40

// Root is a host filesystem tree; "/" is the real host.
type Root struct {
	dir string
}

// New returns a Root at dir ("" means "/").
func New(dir string) Root {
	if dir == "" {
		dir = "/"
	}
	return Root{dir: filepath.Clean(dir)}
}

// Dir is the root directory itself.
func (r Root) Dir() string { return r.dir }

// IsHost reports whether this Root is the running system's own root, the
// only case where kernel state (netlink, sockets) describes the same host as
// the files.
func (r Root) IsHost() bool { return r.dir == "/" }

// Path maps an absolute host path into the root without following symlinks.
// Use it for messages and for paths handed to other programs; use Resolve
// before opening anything.
func (r Root) Path(hostPath string) string {
	return filepath.Join(r.dir, filepath.Clean("/"+hostPath))
}

// Resolve maps hostPath into the root and follows symlinks as if the root
// were "/": an absolute link target restarts at the root and ".." never
// climbs above it. The last component may be missing.
func (r Root) Resolve(hostPath string) (string, error) {
	if r.IsHost() {
		// Rooted at "/", the kernel's own resolution is already contained,
		// and the generator probes ~100 host paths on every boot: one
		// readlink per component would be a quarter of its run time.
		return filepath.Clean("/" + hostPath), nil
	}
	rest := strings.Split(strings.TrimPrefix(filepath.Clean("/"+hostPath), "/"), "/")
	resolved := "/"
	links := 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, part)
		target, err := os.Readlink(filepath.Join(r.dir, next))
		if err != nil {
			// Not a symlink, or does not exist: keep the name as it is.
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("resolve %s under %s: too many symlinks", hostPath, r.dir)
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return filepath.Join(r.dir, resolved), nil
}

// Readlink reads a symlink's target as stored (host-absolute or relative).
func (r Root) Readlink(hostPath string) (string, error) {
	if !r.IsHost() {
		if target, used, err := r.readlinkIn(hostPath); used {
			return target, err
		}
	}
	p, err := r.ResolveEntry(hostPath)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}

// Stat stats a host path through Resolve.
func (r Root) Stat(hostPath string) (fs.FileInfo, error) {
	if !r.IsHost() {
		if fi, used, err := r.statIn(hostPath); used {
			return fi, err
		}
	}
	p, err := r.Resolve(hostPath)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

// Exists reports whether hostPath exists; errors other than "not found"
// count as existing so that a permission problem is not mistaken for absence.
func (r Root) Exists(hostPath string) bool {
	_, err := r.Stat(hostPath)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
