package generator

import (
	"path/filepath"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// InstalledBinary is the binary the drop-ins run: the one systemd started
// as the generator (its link resolved by the kernel), so a tarball install
// under /usr/local runs its own binary and a package's /usr/bin its own.
// "" (hostfs.Binary) unless it is the installed tool on this host: with
// --root the drop-ins describe a fixture, and a test binary, or one whose
// file was replaced under it ("... (deleted)"), is no tool to run.
func InstalledBinary(root hostfs.Root, executable func() (string, error)) string {
	if !root.IsHost() {
		return ""
	}
	exe, err := executable()
	if err != nil || !filepath.IsAbs(exe) || filepath.Base(exe) != filepath.Base(hostfs.Binary) {
		return ""
	}
	return filepath.Clean(exe)
}
