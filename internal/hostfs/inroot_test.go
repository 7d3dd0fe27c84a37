package hostfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// The kernel's resolution in a root (openat2) and Resolve's walk agree on
// every read, link by link: absolute links restart at the root, ".."
// stops there, a link out of the root stays in it, loops and dangling
// links fail, and what is not a regular file is refused unopened.
func TestInRootAgreesWithTheWalk(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret"), "host file")
	mustWrite(t, filepath.Join(outside, "etc", "real"), "outside's etc")
	mustWrite(t, filepath.Join(dir, "etc", "real"), "fixture file")
	mustWrite(t, filepath.Join(dir, "etc", "sub", "file"), "in sub")
	links := map[string]string{
		"etc/abs":      "/etc/real",
		"etc/climb":    "../../../../../../etc/real",
		"etc/escape":   filepath.Join(outside, "secret"),
		"etc/outdir":   outside,
		"etc/dirlink":  "/etc",
		"etc/reldir":   "sub",
		"up":           "../../..",
		"etc/loop1":    "/etc/loop2",
		"etc/loop2":    "/etc/loop1",
		"etc/dangling": "/nowhere",
		"etc/chain":    "/etc/dirlink/abs",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "etc", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"/etc/real", "/etc/abs", "/etc/climb", "etc/../etc/real", "/etc/escape", "/etc/outdir/etc/real",
		"/etc/dirlink/real", "/etc/dirlink/sub/file", "/etc/reldir/file", "/up/etc/real", "/up/up/etc/abs",
		"/etc/loop1", "/etc/dangling", "/etc/chain", "/etc/fifo", "/etc/real/x", "/etc", "/etc/dirlink", "/missing/x",
		"/etc/sub", "/etc/reldir",
	}
	r := New(dir)
	kernel, walk := observe(t, r, paths, false), observe(t, r, paths, true)
	if noOpenat2.Load() {
		t.Fatal("openat2 is not usable here: the kernel's resolution was not compared with the walk")
	}
	for _, p := range paths {
		if kernel[p] != walk[p] {
			t.Errorf("%s: kernel's resolution %+v, the walk %+v", p, kernel[p], walk[p])
		}
	}
	if got := kernel["/etc/escape"]; got.read != "error: not found" {
		t.Errorf("a link out of the root was followed out: %+v", got)
	}
	if got := kernel["/etc/outdir/etc/real"]; got.read != "error: not found" {
		t.Errorf("a link to a host directory was followed out: %+v", got)
	}
}

// seen is what the reads of one path say, errors by kind.
type seen struct{ read, stat, link, list string }

func observe(t *testing.T, r Root, paths []string, forceWalk bool) map[string]seen {
	t.Helper()
	noOpenat2.Store(forceWalk)
	defer noOpenat2.Store(false)
	out := map[string]seen{}
	for _, p := range paths {
		var s seen
		data, err := r.ReadFile(p)
		s.read = kind(err, string(data))
		fi, err := r.Stat(p)
		if err == nil {
			// Name is left out: the walk's is the resolved file's, the
			// kernel's the path's own, as os.Stat's and Stat's on "/".
			s.stat = fi.Mode().String()
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Size != fi.Size() {
				t.Errorf("%s: Sys() %T", p, fi.Sys())
			}
		}
		s.stat = kind(err, s.stat)
		target, err := r.Readlink(p)
		s.link = kind(err, target)
		entries, err := r.ReadDir(p)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name()+":"+e.Type().String())
		}
		s.list = kind(err, slices.Concat(names, nil))
		out[p] = s
	}
	if forceWalk != noOpenat2.Load() {
		t.Fatal("the walk was not forced, or openat2 was given up")
	}
	return out
}

func kind[T any](err error, ok T) string {
	switch {
	case err == nil:
		return stringOf(ok)
	case errors.Is(err, fs.ErrNotExist):
		return "error: not found"
	case errors.Is(err, ErrNotRegular):
		return "error: not regular"
	case errors.Is(err, syscall.ENOTDIR):
		return "error: not a directory"
	case errors.Is(err, syscall.EINVAL):
		return "error: invalid (not a link)"
	}
	return "error"
}

func stringOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []string:
		return filepath.Join(v...)
	}
	return ""
}
