// Package repo finds the repository a test runs in, for tests that read
// files kept beside the code (reference dumps, docs): go test runs each
// package in its own directory, so they walk up to the module's go.mod.
package repo

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the directory holding the module's go.mod, above the test's
// working directory; a test outside the repository fails.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}
