package hostfs

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveStaleTemps removes only WriteFileAtomic's regular temp files of the
// one file named: not another file's temps, not a directory or a symlink
// that happens to match, not the file itself.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	r := New(dir)
	d := filepath.Join(dir, "run/x")
	mustWrite(t, filepath.Join(d, "plan.json"), "{}")
	mustWrite(t, filepath.Join(d, ".plan.json.tmp-123"), "{half")
	mustWrite(t, filepath.Join(d, ".status.json.tmp-9"), "{half")
	mustWrite(t, filepath.Join(d, ".plan.json.tmp-dir/keep"), "x")
	outside := filepath.Join(t.TempDir(), "outside")
	mustWrite(t, outside, "x")
	if err := os.Symlink(outside, filepath.Join(d, ".plan.json.tmp-link")); err != nil {
		t.Fatal(err)
	}
	removed, err := r.RemoveStaleTemps("/run/x/plan.json")
	if err != nil || len(removed) != 1 || filepath.Base(removed[0]) != ".plan.json.tmp-123" {
		t.Fatalf("removed %q, %v; want only .plan.json.tmp-123", removed, err)
	}
	for _, keep := range []string{"plan.json", ".status.json.tmp-9", ".plan.json.tmp-dir/keep", ".plan.json.tmp-link"} {
		if _, err := os.Lstat(filepath.Join(d, keep)); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the symlink's target went: %v", err)
	}
	if removed, err := r.RemoveStaleTemps("/nowhere/plan.json"); err != nil || removed != nil {
		t.Errorf("missing directory: %q, %v", removed, err)
	}
	// WriteFileAtomic's temps carry the prefix RemoveStaleTemps looks for.
	if p := tempPrefix("plan.json"); p != ".plan.json.tmp-" {
		t.Errorf("tempPrefix = %q", p)
	}
}

func TestRemoveFileRemovesTheNameNotTheTarget(t *testing.T) {
	d := t.TempDir()
	r := New(d)
	outside := filepath.Join(t.TempDir(), "keep")
	mustWrite(t, outside, "x")
	mustWrite(t, filepath.Join(d, "etc/f"), "y")
	if err := os.Symlink(outside, filepath.Join(d, "etc/link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/etc/f", "/etc/link", "/etc/missing", "/no/dir/at/all"} {
		if err := r.RemoveFile(p); err != nil {
			t.Errorf("RemoveFile(%s): %v", p, err)
		}
		if _, err := os.Lstat(r.Path(p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target went too: %v", err)
	}
}
