package config

import (
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestCheckNamed(t *testing.T) {
	root := rootWith(t, ptr("backend: auto\n"))
	if err := CheckNamed(root, hostfs.ConfigFile); err != nil {
		t.Errorf("present file: %v", err)
	}
	err := CheckNamed(root, "/etc/typo.yaml")
	want := "no such file under --root " + root.Dir() + ": fix the path, or leave out --config to read " + hostfs.ConfigFile + " (the built-in defaults when that is missing too)"
	if err == nil || err.Error() != want {
		t.Errorf("missing file: %v; want %q", err, want)
	}
	// On the host itself there is no --root to name.
	err = CheckNamed(hostfs.New("/"), "/nonexistent/rke2-proxy-backend.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "no such file: fix the path") {
		t.Errorf("missing file on the host: %v", err)
	}
	// A path Stat cannot follow (through a regular file) is not "missing":
	// Load's read names that problem with its own hint.
	if err := CheckNamed(root, hostfs.ConfigFile+"/sub.yaml"); err != nil {
		t.Errorf("path through a file: %v; want nil (Load reports it)", err)
	}
	// A dangling link is missing: Stat follows it inside the root, as
	// Load's read would.
	if err := os.Symlink("/etc/gone.yaml", root.Path("/etc/dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := CheckNamed(root, "/etc/dangling.yaml"); err == nil {
		t.Errorf("dangling link: no error; want it refused as missing")
	}
}
