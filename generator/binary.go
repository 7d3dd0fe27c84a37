package generator

import (
	"path/filepath"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// InstalledBinary is the tool the drop-ins run: the one installed with the
// generator systemd started (its link resolved by the kernel), so a
// tarball install under /usr/local runs its own tool and a package's
// /usr/bin its own. The generator is its own small program in
// PREFIX/libexec (cmd/rke2-proxy-backend-generator), the tool is
// PREFIX/bin/rke2-proxy-backend; the tool itself run as the generator (by
// its argv[0], as before 0.3) is its own. "" (hostfs.Binary) unless it is
// installed on this host: with --root the drop-ins describe a fixture, and
// a test binary, or one whose file was replaced under it ("... (deleted)"),
// is no tool to run.
func InstalledBinary(root hostfs.Root, executable func() (string, error)) string {
	if !root.IsHost() {
		return ""
	}
	exe, err := executable()
	if err != nil || !filepath.IsAbs(exe) {
		return ""
	}
	exe = filepath.Clean(exe)
	tool := filepath.Base(hostfs.Binary)
	switch {
	case filepath.Base(exe) == tool:
		return exe
	case filepath.Base(exe) == Name && filepath.Base(filepath.Dir(exe)) == "libexec":
		return filepath.Join(filepath.Dir(filepath.Dir(exe)), "bin", tool)
	}
	return ""
}
