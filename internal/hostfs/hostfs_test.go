package hostfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveKeepsSymlinksInsideRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret"), "host file")
	mustWrite(t, filepath.Join(dir, "etc", "real"), "fixture file")
	// An absolute link restarts at the root, not at the real "/".
	if err := os.Symlink("/etc/real", filepath.Join(dir, "etc", "abs")); err != nil {
		t.Fatal(err)
	}
	// ".." cannot climb above the root.
	if err := os.Symlink("../../../../../../etc/real", filepath.Join(dir, "etc", "climb")); err != nil {
		t.Fatal(err)
	}
	// A link to a real host path outside the root stays inside the root.
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "etc", "escape")); err != nil {
		t.Fatal(err)
	}
	r := New(dir)
	for _, p := range []string{"/etc/abs", "/etc/climb", "etc/../etc/real"} {
		got, err := r.ReadFile(p)
		if err != nil || string(got) != "fixture file" {
			t.Errorf("ReadFile(%q) = %q, %v; want the fixture file", p, got, err)
		}
	}
	if got, err := r.ReadFile("/etc/escape"); err == nil {
		t.Errorf("ReadFile(/etc/escape) followed a link out of the root: %q", got)
	}
	resolved, err := r.Resolve("/etc/escape")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resolved, dir+string(os.PathSeparator)) {
		t.Errorf("Resolve(/etc/escape) = %s, outside root %s", resolved, dir)
	}
}

func TestResolveLoopIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/b", filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/a", filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir).Resolve("/a/x"); err == nil || !strings.Contains(err.Error(), "too many symlinks") {
		t.Fatalf("Resolve of a loop: err = %v, want too many symlinks", err)
	}
}

func TestNewDefaultsToHost(t *testing.T) {
	if r := New(""); r.Dir() != "/" || !r.IsHost() {
		t.Fatalf("New(\"\") = %q, IsHost %v", r.Dir(), r.IsHost())
	}
	if r := New(t.TempDir()); r.IsHost() {
		t.Fatal("a temp dir root claims to be the host")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	r := New(dir)
	changed, err := r.WriteFileAtomic("/etc/x/file.yaml", []byte("one\n"), 0o600)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	p := filepath.Join(dir, "etc", "x", "file.yaml")
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after write: %v %v", fi, err)
	}
	before := fi.ModTime()

	// Same bytes and mode: nothing touched, not even the mtime.
	changed, err = r.WriteFileAtomic("/etc/x/file.yaml", []byte("one\n"), 0o600)
	if err != nil || changed {
		t.Fatalf("identical write: changed=%v err=%v", changed, err)
	}
	if fi, _ := os.Stat(p); !fi.ModTime().Equal(before) {
		t.Fatal("identical write changed the mtime")
	}

	// A different mode is a change even with the same bytes.
	if changed, err = r.WriteFileAtomic("/etc/x/file.yaml", []byte("one\n"), 0o644); err != nil || !changed {
		t.Fatalf("mode change: changed=%v err=%v", changed, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "etc", "x"))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileAtomicReplacesPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	mustWrite(t, victim, "must stay")
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "etc", "dropin.yaml")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir).WriteFileAtomic("/etc/dropin.yaml", []byte("ours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "must stay" {
		t.Fatalf("write followed the planted link: victim now %q", got)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("drop-in is not a regular file after the write: %v %v", fi, err)
	}
}

func TestExists(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "present"), "")
	r := New(dir)
	if !r.Exists("/present") || r.Exists("/absent") {
		t.Fatal("Exists disagrees with the tree")
	}
}

// --root's default follows the environment, and an empty value is unset.
func TestDefaultRoot(t *testing.T) {
	for env, want := range map[string]string{"": "/", "/srv/node": "/srv/node"} {
		t.Setenv(EnvRoot, env)
		if got := DefaultRoot(); got != want {
			t.Errorf("%s=%q: DefaultRoot() = %q, want %q", EnvRoot, env, got, want)
		}
	}
}
