// Package testhost builds fake host roots for tests: a /proc, /sys, /lib,
// /etc and /var tree in t.TempDir() laid out the way real hosts lay them out
// (sysfs symlinks, Debian alternatives, RKE2's units and data dir), so the
// probe, the decision and the CLI can be tested against "a Synology NAS" or
// "a Debian 12 node" without one. It is test support only.
//
// Builders chain and fail the test on any write error:
//
//	root := testhost.New(t).Debian12().RKE2v134().PinnedProxyMode("nftables").Root()
package testhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Host is a fake host root under construction.
type Host struct {
	t       testing.TB
	dir     string
	release string
}

// New returns an empty fake root in t.TempDir().
func New(t testing.TB) *Host {
	t.Helper()
	return &Host{t: t, dir: t.TempDir()}
}

// NewInMemory is New on /dev/shm when there is one: a root of tens of
// thousands of files (a big sysfs) builds in a fraction of a second there
// and can take half a minute on a busy disk.
func NewInMemory(t testing.TB) *Host {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "testhost-")
	if err != nil {
		return New(t)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return &Host{t: t, dir: dir}
}

// Dir is the fake root's directory on disk.
func (h *Host) Dir() string { return h.dir }

// Root is the fake root as the program sees it.
func (h *Host) Root() hostfs.Root { return hostfs.New(h.dir) }

// Release is the kernel release set by Kernel ("" before).
func (h *Host) Release() string { return h.release }

// File writes content at hostPath, creating parent directories.
func (h *Host) File(hostPath, content string) *Host {
	h.t.Helper()
	return h.write(hostPath, []byte(content))
}

// Symlink makes hostPath a symlink to target (stored as given, so an
// absolute target means "from the host's /").
func (h *Host) Symlink(hostPath, target string) *Host {
	h.t.Helper()
	full := h.path(hostPath)
	h.mkdir(filepath.Dir(full))
	_ = os.Remove(full)
	if err := os.Symlink(target, full); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// Mkdir creates a host directory (and its parents).
func (h *Host) Mkdir(hostPath string) *Host {
	h.t.Helper()
	h.mkdir(h.path(hostPath))
	return h
}

// Remove deletes a host path (file, link or tree), e.g. to take one source
// away from a profile.
func (h *Host) Remove(hostPath string) *Host {
	h.t.Helper()
	if err := os.RemoveAll(h.path(hostPath)); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// Cmdline writes /proc/cmdline.
func (h *Host) Cmdline(s string) *Host {
	h.t.Helper()
	return h.File("/proc/cmdline", s+"\n")
}

// Container marks the root as a container whose PID 1 got args (NUL
// separated in /proc/1/cmdline), the way systemd-nspawn sets things up.
func (h *Host) Container(args ...string) *Host {
	h.t.Helper()
	h.File("/run/systemd/container", "systemd-nspawn\n")
	return h.File("/proc/1/cmdline", strings.Join(args, "\x00")+"\x00")
}

// EnvFile writes an environment file (KEY=VALUE lines) at hostPath, e.g.
// /etc/default/rke2-server.
func (h *Host) EnvFile(hostPath string, lines ...string) *Host {
	h.t.Helper()
	return h.File(hostPath, strings.Join(lines, "\n")+"\n")
}

func (h *Host) path(hostPath string) string {
	return filepath.Join(h.dir, filepath.Clean("/"+hostPath))
}

func (h *Host) mkdir(full string) {
	h.t.Helper()
	if err := os.MkdirAll(full, 0o755); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
}

func (h *Host) write(hostPath string, data []byte) *Host {
	h.t.Helper()
	full := h.path(hostPath)
	h.mkdir(filepath.Dir(full))
	if err := os.WriteFile(full, data, 0o644); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// needRelease fails the test when a builder needs the kernel release first.
func (h *Host) needRelease(what string) {
	h.t.Helper()
	if h.release == "" {
		h.t.Fatalf("testhost: call Kernel(release) before %s", what)
	}
}
