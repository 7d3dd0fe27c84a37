// Package nstest holds test helpers for netfilter code: where the upstream
// kube-proxy reference dumps live, and running a test inside a throwaway
// network namespace.
package nstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/repo"
)

// RefDir returns testdata/kube-proxy-dumps under the module root: the
// upstream kube-proxy expected-rule dumps (provenance in its README.md).
// They are part of the repository, so a missing copy fails the test: a
// skip would hide that a fresh clone no longer tests against upstream.
func RefDir(t testing.TB) string {
	t.Helper()
	ref := filepath.Join(repo.Root(t), "testdata", "kube-proxy-dumps")
	if _, err := os.Stat(filepath.Join(ref, "README.md")); err != nil {
		t.Fatalf("upstream kube-proxy dumps missing from the repository: %v", err)
	}
	return ref
}

// ReadRef returns the content of a reference file.
func ReadRef(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RefDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
