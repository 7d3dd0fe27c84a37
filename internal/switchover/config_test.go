package switchover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A node without an operator config gets one the real loader reads, and a
// rollback removes it again.
func TestFileConfigCreatesAndRestoresAbsence(t *testing.T) {
	dir := t.TempDir()
	root := hostfs.New(dir)
	c := FileConfig{Root: root, File: hostfs.ConfigFile}
	snap, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(snap, backend.NFTables); err != nil {
		t.Fatal(err)
	}
	if snap.Existed {
		t.Fatal("snapshot says the file existed")
	}
	cfg, err := config.Load(root, hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backend != string(backend.NFTables) || cfg.BackendSource != config.SourceConfig {
		t.Fatalf("loader reads backend %q from %q", cfg.Backend, cfg.BackendSource)
	}
	if err := c.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if root.Exists(hostfs.ConfigFile) {
		t.Error("rollback left the config switch created")
	}
}

// A file switch cannot edit in place is left untouched, and nothing is
// backed up.
func TestFileConfigRefusesWithoutWriting(t *testing.T) {
	const odd = "{backend: auto, node_label: true}\n"
	root := rootWithConfig(t, odd, 0o644)
	c := FileConfig{Root: root, File: hostfs.ConfigFile}
	snap, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	err = c.Set(snap, backend.IptablesNFT)
	if err == nil || !strings.Contains(err.Error(), hostfs.ConfigFile) {
		t.Fatalf("want an error naming the file, got %v", err)
	}
	if got, _ := root.ReadFile(hostfs.ConfigFile); string(got) != odd {
		t.Errorf("file changed to %q", got)
	}
}

func TestFindUnit(t *testing.T) {
	inactive := func(context.Context, string) bool { return false }
	install := func(h *testhost.Host, units ...string) hostfs.Root {
		for _, u := range units {
			h.File(u, "[Service]\n")
		}
		return h.Root()
	}
	t.Run("the active one wins", func(t *testing.T) {
		root := install(testhost.New(t), "/usr/local/lib/systemd/system/rke2-server.service")
		got, err := FindUnit(context.Background(), distro.Find(root, ""), func(_ context.Context, u string) bool { return u == "rke2-agent.service" })
		if err != nil || got != "rke2-agent.service" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("the one installed", func(t *testing.T) {
		root := install(testhost.New(t), "/usr/lib/systemd/system/rke2-agent.service")
		got, err := FindUnit(context.Background(), distro.Find(root, ""), inactive)
		if err != nil || got != "rke2-agent.service" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("both installed, none active", func(t *testing.T) {
		root := install(testhost.New(t), "/usr/lib/systemd/system/rke2-agent.service", "/etc/systemd/system/rke2-server.service")
		if _, err := FindUnit(context.Background(), distro.Find(root, ""), inactive); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("none", func(t *testing.T) {
		if _, err := FindUnit(context.Background(), distro.Find(hostfs.New(t.TempDir()), ""), inactive); err == nil {
			t.Fatal("no error")
		}
	})
}

// rootWithConfig is a fresh host root whose operator config holds text with
// mode perm (a switch must keep both its comments and its mode).
func rootWithConfig(t *testing.T, text string, perm os.FileMode) hostfs.Root {
	t.Helper()
	root := testhost.New(t).File(hostfs.ConfigFile, text).Root()
	if err := os.Chmod(root.Path(hostfs.ConfigFile), perm); err != nil {
		t.Fatal(err)
	}
	return root
}

// On the host itself (root "/", where paths are left to the kernel) a
// config that is a symlink stays that symlink: the file it points at is
// switched and restored, byte for byte. It used to be replaced by a file.
func TestFileConfigKeepsTheLinkOnTheHost(t *testing.T) {
	dir := t.TempDir()
	real, cfg := filepath.Join(dir, "checkout", "proxy-backend.yaml"), filepath.Join(dir, "config.yaml")
	const original = "backend: iptables-legacy # by hand\n"
	os.MkdirAll(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, []byte(original), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("checkout/proxy-backend.yaml", cfg); err != nil {
		t.Fatal(err)
	}
	c := FileConfig{Root: hostfs.New("/"), File: cfg}
	snap, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name string
		do   func() error
		want string
	}{
		{"set", func() error { return c.Set(snap, backend.IptablesNFT) }, "backend: iptables-nft # by hand\n"},
		{"restore", func() error { return c.Restore(snap) }, original},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got, err := os.Readlink(cfg); err != nil || got != "checkout/proxy-backend.yaml" {
			t.Errorf("after %s the config is no longer the link: %q %v", step.name, got, err)
		}
		if got, _ := os.ReadFile(real); string(got) != step.want {
			t.Errorf("after %s the linked file holds %q, want %q", step.name, got, step.want)
		}
	}
}
