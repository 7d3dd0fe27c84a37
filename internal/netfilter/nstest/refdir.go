// Package nstest holds test helpers for netfilter code: where the upstream
// kube-proxy reference dumps live, and running a test inside a throwaway
// network namespace.
package nstest

import (
	"os"
	"path/filepath"
	"testing"
)

// RefDir returns ../shared/reference/kube-proxy-dumps relative to the
// module root, or skips the test when it is absent (the dumps are shared
// reference data, not part of the project).
func RefDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	ref := filepath.Join(dir, "..", "shared", "reference", "kube-proxy-dumps")
	if _, err := os.Stat(filepath.Join(ref, "README.md")); err != nil {
		t.Skipf("reference dumps not present at %s", ref)
	}
	return ref
}

// ReadRef returns the content of a reference file (skipping when absent).
func ReadRef(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RefDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
