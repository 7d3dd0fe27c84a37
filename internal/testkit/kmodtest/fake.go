// Package kmodtest installs a fake modprobe into a fixture root: the test
// kernel has no loadable modules, so module loading is tested against a
// fake module tree that behaves like the real one.
package kmodtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// script behaves like modprobe against the fixture tree: a module listed in
// lib/modules/<release>/modules.dep (as .ko, .ko.xz, .ko.zst) "loads" (joins
// proc/modules), anything else fails with modprobe's own message. Every call is appended to
// <root>/modprobe.calls.
const script = `#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$1" = "--" ] && shift
echo "$1" >> "$root/modprobe.calls"
if grep -qE "(^|/)$1\.ko(\.[a-z]+)?:" "$root/lib/modules/RELEASE/modules.dep" 2>/dev/null; then
  echo "$1 16384 0 - Live 0x0000000000000000" >> "$root/proc/modules"
  exit 0
fi
echo "modprobe: FATAL: Module $1 not found in directory /lib/modules/RELEASE" >&2
exit 1
`

// Install writes the fake as <rootDir>/<hostfs.Modprobe> for kernel release.
func Install(t testing.TB, rootDir, release string) {
	t.Helper()
	p := filepath.Join(rootDir, hostfs.Modprobe)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(script, "RELEASE", release)), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Calls lists the modules the fake was asked to load, in order.
func Calls(t testing.TB, rootDir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rootDir, "modprobe.calls"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// InstallScript writes script (a shell script) as the fake modprobe, for
// tests of how modprobe misbehaving is handled.
func InstallScript(t testing.TB, rootDir, script string) {
	t.Helper()
	p := filepath.Join(rootDir, hostfs.Modprobe)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// HangingWithChild is a modprobe that never ends and whose child holds its
// stderr open: only killing the process group and not waiting for the
// pipe ends it.
const HangingWithChild = "#!/bin/sh\nsleep 120 &\nexec sleep 120\n"

// ExitsLeavingStderrHolder is a modprobe that succeeds at once but leaves a
// child in a new session (out of its process group) holding stderr.
const ExitsLeavingStderrHolder = "#!/bin/sh\nsetsid sleep 8 &\nexit 0\n"
