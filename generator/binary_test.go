package generator

import (
	"io/fs"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// The drop-ins run the tool installed with the generator on this host (a
// tarball's /usr/local/bin), and fall back to hostfs.Binary for fixtures,
// test binaries and a replaced file.
func TestInstalledBinary(t *testing.T) {
	exe := func(p string, err error) func() (string, error) {
		return func() (string, error) { return p, err }
	}
	host, fixture := hostfs.New("/"), hostfs.New(t.TempDir())
	cases := []struct {
		name string
		root hostfs.Root
		exe  func() (string, error)
		want string
	}{
		{"tarball under /usr/local", host, exe("/usr/local/bin/rke2-proxy-backend", nil), "/usr/local/bin/rke2-proxy-backend"},
		{"package", host, exe("/usr/bin/rke2-proxy-backend", nil), "/usr/bin/rke2-proxy-backend"},
		{"odd prefix", host, exe("/opt/rke2-proxy-backend/bin/rke2-proxy-backend", nil), "/opt/rke2-proxy-backend/bin/rke2-proxy-backend"},
		{"generator, package", host, exe("/usr/libexec/rke2-proxy-backend-generator", nil), "/usr/bin/rke2-proxy-backend"},
		{"generator, tarball", host, exe("/usr/local/libexec/rke2-proxy-backend-generator", nil), "/usr/local/bin/rke2-proxy-backend"},
		{"generator, odd prefix", host, exe("/opt/rke2-proxy-backend/libexec/rke2-proxy-backend-generator", nil), "/opt/rke2-proxy-backend/bin/rke2-proxy-backend"},
		{"generator elsewhere", host, exe("/tmp/rke2-proxy-backend-generator", nil), ""},
		{"generator on a fixture", fixture, exe("/usr/libexec/rke2-proxy-backend-generator", nil), ""},
		{"fixture root", fixture, exe("/usr/local/bin/rke2-proxy-backend", nil), ""},
		{"test binary", host, exe("/tmp/go-build1/b001/cli.test", nil), ""},
		{"file replaced under it", host, exe("/usr/local/bin/rke2-proxy-backend (deleted)", nil), ""},
		{"relative", host, exe("bin/rke2-proxy-backend", nil), ""},
		{"unknown", host, exe("", fs.ErrNotExist), ""},
	}
	for _, c := range cases {
		if got := InstalledBinary(c.root, c.exe); got != c.want {
			t.Errorf("%s: InstalledBinary = %q, want %q", c.name, got, c.want)
		}
	}
}
