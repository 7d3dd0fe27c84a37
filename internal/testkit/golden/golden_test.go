package golden

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An update writes only what differs, removes only stale files inside the
// tree it was given, and leaves a sibling file alone.
func TestTreeUpdateTouchesOnlyItsTree(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "normal")
	write(t, filepath.Join(tree, "same"), []byte("same"))
	write(t, filepath.Join(tree, "stale"), []byte("old"))
	write(t, filepath.Join(dir, "host", "kept"), []byte("another step's"))
	same := filepath.Join(tree, "same")
	old := time.Unix(1, 0)
	if err := os.Chtimes(same, old, old); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "")
	t.Setenv(EnvUpdate, "1")
	Tree(t, tree, map[string]string{"same": "same", "new/file": "new"})
	if got := ReadTree(t, tree); len(got) != 2 || got["same"] != "same" || got["new/file"] != "new" {
		t.Fatalf("tree after update = %v", got)
	}
	if info, err := os.Stat(same); err != nil || !info.ModTime().Equal(old) {
		t.Errorf("an equal file was rewritten (%v, %v)", info.ModTime(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "host", "kept")); err != nil {
		t.Errorf("a file outside the tree was removed: %v", err)
	}
}

// CI never rewrites goldens: the request fails the test.
func TestUpdateRefusedUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	t.Setenv(EnvUpdate, "1")
	ft := &fatalT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Update(ft)
	}()
	if !ft.fatal {
		t.Fatal("Update under CI=true did not fail the test")
	}
}

type fatalT struct {
	testing.TB
	fatal bool
}

func (f *fatalT) Fatalf(string, ...any) { f.fatal = true; panic("fatal") }
func (f *fatalT) Helper()               {}
