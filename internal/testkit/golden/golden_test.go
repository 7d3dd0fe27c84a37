package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Without UPDATE_GOLDEN=1 exactly (unset, 0, true, ...) a golden that
// differs from the output fails the test with a diff and is not written,
// and a missing one fails and is not created.
func TestMismatchFailsAndWritesNothing(t *testing.T) {
	t.Setenv("CI", "")
	for _, update := range []string{"", "0", "true", "yes"} {
		t.Setenv(EnvUpdate, update)
		dir := t.TempDir()
		path := filepath.Join(dir, "out.txt")
		write(t, path, []byte("a\nwant\nz\n"))
		rec := record(func(tb testing.TB) { File(tb, path, []byte("a\ngot\nz\n")) })
		if !rec.failed || !strings.Contains(rec.log, "-want\n+got\n") {
			t.Errorf("%s=%q: a differing golden: failed %v, want a failure with the diff; log:\n%s", EnvUpdate, update, rec.failed, rec.log)
		}
		if data, _ := os.ReadFile(path); string(data) != "a\nwant\nz\n" {
			t.Errorf("%s=%q: the golden was written: %q", EnvUpdate, update, data)
		}
		missing := filepath.Join(dir, "missing.txt")
		if rec := record(func(tb testing.TB) { File(tb, missing, []byte("got\n")) }); !rec.failed {
			t.Errorf("%s=%q: a missing golden passed", EnvUpdate, update)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Errorf("%s=%q: a missing golden was created", EnvUpdate, update)
		}
		tree := filepath.Join(dir, "tree")
		write(t, filepath.Join(tree, "kept"), []byte("old"))
		if rec := record(func(tb testing.TB) { Tree(tb, tree, map[string]string{"new": "x"}) }); !rec.failed {
			t.Errorf("%s=%q: a differing tree passed", EnvUpdate, update)
		}
		if got := ReadTree(t, tree); len(got) != 1 || got["kept"] != "old" {
			t.Errorf("%s=%q: the tree was written: %v", EnvUpdate, update, got)
		}
		if rec := record(func(tb testing.TB) { Absent(tb, filepath.Join(tree, "kept")) }); !rec.failed {
			t.Errorf("%s=%q: a golden that should be absent passed", EnvUpdate, update)
		}
	}
}

// UPDATE_GOLDEN=1 writes what differs and passes; an equal golden passes
// either way.
func TestUpdateWritesWithOne(t *testing.T) {
	t.Setenv("CI", "")
	path := filepath.Join(t.TempDir(), "out.txt")
	write(t, path, []byte("want\n"))
	t.Setenv(EnvUpdate, "1")
	if rec := record(func(tb testing.TB) { File(tb, path, []byte("got\n")) }); rec.failed {
		t.Fatalf("update failed:\n%s", rec.log)
	}
	t.Setenv(EnvUpdate, "")
	if rec := record(func(tb testing.TB) { File(tb, path, []byte("got\n")) }); rec.failed {
		t.Fatalf("the updated golden differs:\n%s", rec.log)
	}
}

// CI never rewrites goldens: UPDATE_GOLDEN=1 under CI=true fails every
// golden call, equal or not, and writes nothing.
func TestUpdateRefusedUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	t.Setenv(EnvUpdate, "1")
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	write(t, path, []byte("want\n"))
	for name, call := range map[string]func(testing.TB){
		"File differs": func(tb testing.TB) { File(tb, path, []byte("got\n")) },
		"File equal":   func(tb testing.TB) { File(tb, path, []byte("want\n")) },
		"Tree":         func(tb testing.TB) { Tree(tb, filepath.Join(dir, "tree"), map[string]string{"new": "x"}) },
		"Absent":       func(tb testing.TB) { Absent(tb, path) },
		"Update":       func(tb testing.TB) { Update(tb) },
	} {
		rec := record(call)
		if !rec.failed || !strings.Contains(rec.log, "CI=true") {
			t.Errorf("%s under CI=true with %s=1: failed %v, want a failure naming CI=true; log:\n%s", name, EnvUpdate, rec.failed, rec.log)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "want\n" {
		t.Errorf("a golden was written under CI: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "tree")); err == nil {
		t.Error("a golden tree was written under CI")
	}
}

// recorder is a testing.TB that records failures instead of reporting
// them, so a test can see a golden call fail; Fatal ends the call.
type recorder struct {
	testing.TB
	failed bool
	log    string
}

type fatal struct{}

func record(call func(testing.TB)) *recorder {
	r := &recorder{}
	func() {
		defer func() {
			if p := recover(); p != nil && p != (fatal{}) {
				panic(p)
			}
		}()
		call(r)
	}()
	return r
}

func (r *recorder) Helper()                         {}
func (r *recorder) Logf(format string, args ...any) { r.log += fmt.Sprintf(format, args...) + "\n" }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); panic(fatal{}) }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); panic(fatal{}) }
