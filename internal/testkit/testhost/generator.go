package testhost

import (
	"os"
	"path/filepath"
	"testing"
)

// GeneratorDirs makes the normal, early and late output directories systemd
// hands a generator (systemd.generator(7)), in that order, empty, in
// t.TempDir().
func GeneratorDirs(t testing.TB) []string {
	t.Helper()
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "normal"), filepath.Join(base, "early"), filepath.Join(base, "late")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}
