package hostfs

import (
	"os"
	"path/filepath"
	"testing"
)

// The directory's links are followed inside the root; the last component's
// link is not: the entry is the link itself.
func TestResolveEntry(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"real/state", "outside"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/real/state", filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/outside/x", filepath.Join(dir, "real/state/status.json")); err != nil {
		t.Fatal(err)
	}
	r := New(dir)
	for hostPath, want := range map[string]string{
		"/state/status.json":   filepath.Join(dir, "real/state/status.json"),
		"/state/missing":       filepath.Join(dir, "real/state/missing"),
		"/state/../state/x":    filepath.Join(dir, "real/state/x"),
		"/real/state/../y.txt": filepath.Join(dir, "real/y.txt"),
	} {
		got, err := r.ResolveEntry(hostPath)
		if err != nil || got != want {
			t.Errorf("ResolveEntry(%q) = %q, %v; want %q", hostPath, got, err, want)
		}
	}
	fi, err := os.Lstat(mustEntry(t, r, "/state/status.json"))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the entry is not the planted link itself: %v, %v", fi, err)
	}
}

func mustEntry(t *testing.T, r Root, hostPath string) string {
	t.Helper()
	p, err := r.ResolveEntry(hostPath)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
