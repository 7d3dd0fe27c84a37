package facts

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// envNonRootRoot names the fixture root the non-root half of
// TestNotRootSaysRunAsRoot probes.
const envNonRootRoot = "FACTS_TEST_NONROOT_ROOT"

// Run as another user than root, detect's facts cannot read root's files:
// the host's /proc/net/ip_tables_names (mode 0440) and a fixture's 0600
// config. The message says to run as root, never to change or remove the
// file. As root the test runs itself again as nobody, the real case;
// already not root, it probes as it is.
func TestNotRootSaysRunAsRoot(t *testing.T) {
	if root := os.Getenv(envNonRootRoot); root != "" {
		for _, r := range []hostfs.Root{hostfs.New("/"), hostfs.New(root)} {
			for _, u := range Probe(r, Options{}).Unreadable {
				os.Stdout.WriteString(u + "\n")
			}
		}
		return
	}
	h := testhost.New(t).RKE2Config("config.yaml", "cni: calico\n")
	if err := os.Chmod(h.Root().Path("/etc/rancher/rke2/config.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out string
	if os.Geteuid() != 0 {
		// Already another user: probe here.
		var b strings.Builder
		for _, r := range []hostfs.Root{hostfs.New("/"), h.Root()} {
			for _, u := range Probe(r, Options{}).Unreadable {
				b.WriteString(u + "\n")
			}
		}
		out = b.String()
	} else {
		out = runAsNobody(t, h.Dir())
	}
	for _, want := range []string{
		"/proc/net/ip_tables_names: permission denied: legacy tables are unknown; run rke2-proxy-backend as root",
		"/etc/rancher/rke2/config.yaml: permission denied: RKE2's config cannot be read by this user; run rke2-proxy-backend as root",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("not root, the facts do not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/proc/net/ip_tables_names: permission denied: legacy tables are unknown; check the file's permissions") {
		t.Errorf("a /proc file is not the operator's to change or remove:\n%s", out)
	}
}

// runAsNobody runs this test binary as uid/gid 65534 for the non-root half,
// from a copy nobody may execute, with the fixture root opened to it.
func runAsNobody(t *testing.T, fixture string) string {
	t.Helper()
	dir := t.TempDir()
	self := filepath.Join(dir, "facts.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(self, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	// The temp directories are root's alone: let nobody through them (the
	// file under test stays 0600).
	for _, d := range []string{dir, filepath.Dir(dir), fixture, filepath.Dir(fixture)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(self, "-test.run=^TestNotRootSaysRunAsRoot$", "-test.count=1")
	cmd.Env = append(os.Environ(), envNonRootRoot+"="+fixture)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	return string(out)
}
