// Package golden compares test output with reviewed golden files and, with
// UPDATE_GOLDEN=1, rewrites them. It is test kit: only _test files import
// it, and it is the only way a test in this tree writes a golden. Four
// rules keep a golden test honest: it compares before it writes (a
// difference is reported as a diff, an equal file is left alone), only
// UPDATE_GOLDEN=1 writes (0, true or any other value compares), it
// refuses to run under CI=true (goldens are reviewed changes, never
// rewritten by CI), and it deletes only stale files inside a tree the same
// call rewrites, never a sibling another step would have written.
package golden

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
)

// EnvUpdate is the variable that asks for goldens to be rewritten.
const EnvUpdate = "UPDATE_GOLDEN"

// Update reports whether this run rewrites goldens. Under CI=true a
// request to update fails the test instead.
func Update(t testing.TB) bool {
	t.Helper()
	if os.Getenv(EnvUpdate) != "1" {
		return false
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s=1 with CI=true: goldens are reviewed changes; rewrite them on a workstation and commit them", EnvUpdate)
	}
	return true
}

// File compares got with the golden file at path. In update mode a file
// that differs (or is missing) is written and logged; an equal one is not
// touched.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	update := Update(t) // first: under CI a request to update fails even when all is equal
	want, err := os.ReadFile(path)
	if err == nil && bytes.Equal(got, want) {
		return
	}
	if update {
		write(t, path, got)
		t.Logf("updated %s", path)
		return
	}
	if err != nil {
		t.Fatalf("%v (%s=1 writes it)", err, EnvUpdate)
	}
	t.Errorf("%s differs from this run's output (%s=1 rewrites it after review):\n%s", path, EnvUpdate, Diff(path, want, got))
}

// Diff is a unified diff from the golden want (named path) to this run's
// output got: what UPDATE_GOLDEN=1 would change.
func Diff(path string, want, got []byte) string {
	return string(diff.Diff(path, want, "got", got))
}

// Absent checks that no golden file exists at path (the output it would
// hold is gone); in update mode an existing one is removed.
func Absent(t testing.TB, path string) {
	t.Helper()
	update := Update(t)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if update {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		t.Logf("removed %s", path)
		return
	}
	t.Errorf("%s exists but the run produced nothing for it (%s=1 removes it after review)", path, EnvUpdate)
}

// Tree compares got (slash-separated paths relative to dir -> content)
// with the files under dir. In update mode files that differ or are
// missing are written, and files under dir that got lacks are removed:
// dir is the tree this call owns, so nothing outside it is touched.
func Tree(t testing.TB, dir string, got map[string]string) {
	t.Helper()
	update := Update(t)
	want := ReadTree(t, dir)
	if !update {
		Compare(t, got, want)
		return
	}
	for _, n := range names(got, want) {
		g, inGot := got[n]
		w, inWant := want[n]
		path := filepath.Join(dir, filepath.FromSlash(n))
		switch {
		case !inGot:
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			t.Logf("removed %s", path)
		case !inWant || g != w:
			write(t, path, []byte(g))
			t.Logf("updated %s", path)
		}
	}
}

// Compare reports every file that differs between got and want.
func Compare(t testing.TB, got, want map[string]string) {
	t.Helper()
	for _, n := range names(got, want) {
		g, gok := got[n]
		w, wok := want[n]
		switch {
		case !wok:
			t.Errorf("unexpected file %s:\n%s", n, g)
		case !gok:
			t.Errorf("missing file %s", n)
		case g != w:
			t.Errorf("%s differs:\n%s", n, Diff(n, []byte(w), []byte(g)))
		}
	}
}

// ReadTree maps every regular file under dir to its content; a missing
// dir is an empty tree.
func ReadTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func names(a, b map[string]string) []string {
	var out []string
	for n := range a {
		out = append(out, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
