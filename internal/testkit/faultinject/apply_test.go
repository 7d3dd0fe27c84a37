package faultinject

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestApplyUnderFaults runs apply (RKE2's ExecStartPre) on a node whose
// operator moved the backend from iptables-legacy to iptables-nft since
// the last boot, and fails or kills it at each write, sync, rename,
// unlink, ... it makes under the root, one at a time (the calls listed by
// a clean run). After each run:
//   - every operator file is byte for byte what it was;
//   - RKE2's drop-in is the old one or the new one, whole, or removed
//     with apply saying so (on_failure: warn), never silently missing;
//   - apply never said "[finished] writing F" for a file F whose write
//     the fault hit (issue 31 item 10: a failed directory sync was
//     dropped and apply said "changed");
//   - the next, clean apply (under the node lock) writes the new drop-in
//     and leaves no temp file of ours anywhere under the root.
func TestApplyUnderFaults(t *testing.T) {
	bin := cliLink(t)
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").
		RKE2Config("config.yaml", "token: secret\nkube-proxy-arg:\n  - v=2\n").
		File(hostfs.ConfigFile, "# the operator's\nbackend: iptables-legacy\n")
	kmodtest.Install(t, h.Dir(), h.Release())
	template := h.Dir()
	if res := apply(t, bin, template, nil); res.Exit != 0 {
		t.Fatalf("the earlier boot's apply: %s", res)
	}
	h.File(hostfs.ConfigFile, "# the operator's\nbackend: iptables-nft\n")
	dropIn := rke2.DropInPath(hostfs.RKE2ConfigFile)
	oldDropIn := readFile(t, filepath.Join(template, dropIn))
	before := snapshot(t, template)
	ours := func(rel string) bool {
		rel = "/" + rel
		return strings.HasPrefix(rel, hostfs.RunDir+"/") || rel == dropIn || IsTemp(filepath.Base(rel)) ||
			rel == "/proc/modules" || rel == "/modprobe.calls" // the fake kernel's
	}

	cleanRoot := copyRoot(t, template)
	clean := apply(t, bin, cleanRoot, nil)
	newDropIn := readFile(t, filepath.Join(cleanRoot, dropIn))
	if clean.Exit != 0 || newDropIn == oldDropIn || !strings.Contains(newDropIn, "IPTABLES_MODE=nft") {
		t.Fatalf("clean run:\n%s\n%s", newDropIn, clean)
	}
	faults := Faults(clean.Calls, os.Getenv("FAULTS_ALL") == "1")
	t.Logf("apply: %d calls under the root, %d faults", len(clean.Calls), len(faults))
	for _, f := range faults {
		root := copyRoot(t, template)
		res := apply(t, bin, root, &f)
		if res.Injected == nil {
			t.Errorf("%s: never reached\n%s", f, res)
			continue
		}
		what := f.String() + " (" + strings.ReplaceAll(res.Injected.String(), root, "") + ")"
		if d := before.Diff(snapshot(t, root), ours); len(d) > 0 {
			t.Errorf("%s: operator files changed: %v", what, d)
		}
		// Removed is the one other outcome, and only said: apply's
		// on_failure: warn removes a drop-in it cannot replace, so that
		// RKE2 starts on its own defaults, never on a stale choice.
		got := readFile(t, filepath.Join(root, dropIn))
		removed := got == "" && strings.Contains(res.Stderr, "[finished] removing "+filepath.Join(root, dropIn)+"\n")
		if got != oldDropIn && got != newDropIn && !removed {
			t.Errorf("%s: RKE2's drop-in is neither the old nor the new one, nor removed and said: %q\n%s", what, got, res)
		}
		if file := res.Served(); file != "" && strings.Contains(res.Stderr, "[finished] writing "+file+" (") {
			t.Errorf("%s: apply said it wrote %s, whose write failed\n%s", what, file, res)
		}
		next := apply(t, bin, root, nil)
		if next.Exit != 0 || readFile(t, filepath.Join(root, dropIn)) != newDropIn {
			t.Errorf("%s: the next apply did not write the new drop-in\n%s", what, next)
		}
		if temps := snapshot(t, root).Temps(); len(temps) > 0 {
			t.Errorf("%s: temp files left after the next apply: %v", what, temps)
		}
	}
}

// apply runs `rke2-proxy-backend apply` on root under the tracer.
func apply(t *testing.T, bin, root string, f *Fault) *Result {
	t.Helper()
	cmd := exec.Command(bin, "apply")
	cmd.Env = []string{"RKE2_PROXY_BACKEND_ROOT=" + root, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	res, err := Trace(cmd, []string{root}, f, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// cliLink is this test binary under the CLI's name (TestMain runs the CLI
// then), so the loops run the real command line without a build.
func cliLink(t *testing.T) string {
	t.Helper()
	if !Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), cliName)
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// copyRoot copies a fixture root (links, modes and all) to a new dir.
func copyRoot(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return to
}

func snapshot(t *testing.T, dir string) Tree {
	t.Helper()
	tree, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}
