package switchover

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alternative points the fixture's iptables and ip6tables at flavour
// ("legacy", "nft") as update-alternatives does; the fake RKE2's kubelet
// then writes its chains there at each start.
func (f *fixture) alternative(flavour string) {
	f.t.Helper()
	for _, cmd := range []string{"iptables", "ip6tables"} {
		link := filepath.Join(f.root, "etc/alternatives", cmd)
		os.MkdirAll(filepath.Dir(link), 0o755)
		os.Remove(link)
		if err := os.Symlink("/usr/sbin/"+cmd+"-"+flavour, link); err != nil {
			f.t.Fatal(err)
		}
		bin := filepath.Join(f.root, "usr/sbin", cmd)
		os.MkdirAll(filepath.Dir(bin), 0o755)
		os.Remove(bin)
		if err := os.Symlink("/etc/alternatives/"+cmd, bin); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestSwitchBinaryHostAlternative: kubelet writes its hint chains with the
// host's iptables alternative, which no switch moves. A node whose
// alternative does not fit kube-proxy's backend fails verify (and so its
// verify unit, check and the Node condition), so a switch or a rollback
// that leaves it so must not say the node is fine: it exits 1 naming the
// alternative and the commands that fix it, and the dry run says so first.
// No line speaks of a one-boot override: there is none.
func TestSwitchBinaryHostAlternative(t *testing.T) {
	bin, current, ok := switchHarness(t)
	if !ok {
		return
	}
	// boot is a node up on iptables-legacy with the host's iptables on
	// legacy, then moved to moveTo before the switch.
	boot := func(t *testing.T, moveTo string) *fixture {
		flush()
		f := newFixture(t, bin, false)
		current.Store(f)
		f.alternative("legacy")
		if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
			t.Fatalf("start with the alternative on legacy: %v\n%s", err, out)
		}
		f.alternative(moveTo)
		return f
	}
	dryRun := func(t *testing.T, f *fixture, want string) {
		out, err := f.cmd("", "switch", "--to", "iptables-nft", "--dry-run").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("dry run: %v, want %q in\n%s", err, want, out)
		}
	}
	noOverrideText := func(t *testing.T, log string) {
		if strings.Contains(log, "one-boot override") {
			t.Errorf("the switch speaks of a one-boot override, and there is none:\n%s", log)
		}
	}

	t.Run("moved first, then Ctrl-C: the rollback says the alternative still differs", func(t *testing.T) {
		f := boot(t, "nft")
		dryRun(t, f, "note: the host's iptables alternative points at iptables-nft: should the switch roll back to iptables-legacy, verify fails ([kubelet-hint]) until it points back: update-alternatives --set iptables /usr/sbin/iptables-legacy")
		p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
		if _, ok := f.stepTo(p, "wait"); !ok {
			t.Fatalf("the switch ended before wait\n%s", &p.stderr)
		}
		p.cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(100 * time.Millisecond)
		f.releaseAll()
		code := p.wait(t)
		log := p.stderr.String()
		t.Logf("exit %d\n%s", code, log)
		last := log[strings.LastIndex(strings.TrimRight(log, "\n"), "\n")+1:]
		for _, want := range []string{"rolled back to the previous backend: iptables-legacy", "interrupted by interrupt",
			"the node still fails verify: the host's iptables alternative points at iptables-nft while kube-proxy uses iptables-legacy",
			"update-alternatives --set iptables /usr/sbin/iptables-legacy; update-alternatives --set ip6tables /usr/sbin/ip6tables-legacy"} {
			if !strings.Contains(last, want) {
				t.Errorf("the last line lacks %q: %s", want, last)
			}
		}
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		noOverrideText(t, log)
		if got, _ := os.ReadFile(filepath.Join(f.root, "etc/rke2-proxy-backend/config.yaml")); string(got) != f.original {
			t.Errorf("config %q, want the original", got)
		}
		// The verify unit's judgement (the plan's backend) agrees.
		if out, err := f.cmd("", "verify").CombinedOutput(); exitCode(err) != 1 || !strings.Contains(string(out), "kubelet-hint") {
			t.Errorf("verify after the rollback: exit %d, want 1 with [kubelet-hint]\n%s", exitCode(err), out)
		}
		// The fix the line names makes the node whole.
		f.alternative("legacy")
		if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
			t.Fatalf("restart: %v\n%s", err, out)
		}
		if out, err := f.cmd("", "cleanup", "--kubelet-hints").CombinedOutput(); err != nil {
			t.Fatalf("cleanup --kubelet-hints: %v\n%s", err, out)
		}
		if out, err := f.cmd("", "verify").CombinedOutput(); err != nil {
			t.Errorf("verify after the fix: %v\n%s", err, out)
		}
	})

	t.Run("not moved: the switch is done, and exits 1 saying what to move", func(t *testing.T) {
		f := boot(t, "legacy")
		dryRun(t, f, "warning: the host's iptables alternative points at iptables-legacy, and kubelet writes its hint chains with it: after the switch verify fails ([kubelet-hint]) until it points at iptables-nft; move it first: update-alternatives --set iptables /usr/sbin/iptables-nft")
		p := f.start("switch", "--to", "iptables-nft", "--timeout", "30s")
		code := p.wait(t)
		log := p.stderr.String()
		t.Logf("exit %d\n%s", code, log)
		if code != 1 || !strings.Contains(log, "switched: kube-proxy uses iptables-nft, but the node still fails verify: the host's iptables alternative points at iptables-legacy") {
			t.Errorf("exit %d, want 1 saying the switch is done and the node still fails", code)
		}
		noOverrideText(t, log)
		if got, _ := os.ReadFile(filepath.Join(f.root, "etc/rke2-proxy-backend/config.yaml")); string(got) != f.target || f.journal() != nil {
			t.Errorf("config %q (want the target), journal %+v (want none)", got, f.journal())
		}
		// A retry (SUC's next Job) does not pass the node either.
		out, err := f.cmd("", "switch", "--to", "iptables-nft").CombinedOutput()
		if exitCode(err) != 1 || !strings.Contains(string(out), "already uses iptables-nft") || !strings.Contains(string(out), "update-alternatives --set iptables /usr/sbin/iptables-nft") {
			t.Errorf("retried switch: exit %d, want 1 naming the alternative\n%s", exitCode(err), out)
		}
	})

	t.Run("moved first: the switch is clean", func(t *testing.T) {
		f := boot(t, "nft")
		p := f.start("switch", "--to", "iptables-nft", "--timeout", "30s")
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d\n%s", code, &p.stderr)
		}
		if strings.Contains(p.stderr.String(), "warning:") {
			t.Errorf("a warning in a clean switch:\n%s", &p.stderr)
		}
		f.ends(f.target, &p.stderr)
	})
}

// TestCleanupKubeletHintsClearsTheVerifyUnit follows verify's own fix for
// kubelet's hints on a node switched by a config edit and a restart (no
// switch to tidy them): move the host's alternative, restart RKE2, then
// cleanup --kubelet-hints. The verify unit, which failed on the leftovers,
// must not stay failed until RKE2's next start: cleanup verifies again and
// starts it, and check follows.
func TestCleanupKubeletHintsClearsTheVerifyUnit(t *testing.T) {
	bin, current, ok := switchHarness(t)
	if !ok {
		return
	}
	flush()
	f := newFixture(t, bin, false)
	current.Store(f)
	write(t, filepath.Join(f.ctl, "verify-unit"), "", 0o644)
	unit := func() string {
		data, _ := os.ReadFile(filepath.Join(f.ctl, "verify-unit"))
		return strings.TrimSpace(string(data))
	}
	restart := func() {
		t.Helper()
		f.daemonReload()
		if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
			t.Fatalf("restart: %v\n%s", err, out)
		}
	}
	f.alternative("legacy")
	restart()
	if unit() != "active" {
		log, _ := os.ReadFile(filepath.Join(f.ctl, "verify-unit.log"))
		t.Fatalf("the verify unit is %q on the booted node\n%s", unit(), log)
	}
	// The edit and restart: kube-proxy on nft, kubelet's hints in legacy.
	write(t, filepath.Join(f.root, "etc/rke2-proxy-backend/config.yaml"), f.target, 0o640)
	restart()
	if unit() != "failed" {
		t.Fatalf("the verify unit is %q with kubelet's hints in legacy, want failed", unit())
	}
	// verify's fixes: the stranded rules first (the unit stays failed:
	// cleanup says what still fails), then the alternative, a restart (the
	// unit fails again on the old kubelet's leftovers), and
	// cleanup --kubelet-hints.
	out, err := f.cmd("", "cleanup", "--backend", "iptables-legacy").CombinedOutput()
	t.Logf("cleanup --backend iptables-legacy: %v\n%s", err, out)
	if err != nil || !strings.Contains(string(out), "cleanup: verify still fails:\n  [kubelet-hint]") || unit() != "failed" {
		t.Errorf("cleanup --backend does not say verify still fails on kubelet's hints, or the unit (%s) changed", unit())
	}
	f.alternative("nft")
	restart()
	if unit() != "failed" {
		t.Fatalf("the verify unit is %q with the old kubelet's leftovers in legacy, want failed", unit())
	}
	out, err = f.cmd("", "cleanup", "--kubelet-hints").CombinedOutput()
	t.Logf("cleanup --kubelet-hints: %v\n%s", err, out)
	if err != nil || !strings.Contains(string(out), "cleanup: verify passes now; rke2-proxy-backend-verify.service had failed on what was removed: started it again") {
		t.Errorf("cleanup --kubelet-hints does not say verify passes and the unit was started again")
	}
	if unit() != "active" {
		t.Errorf("the verify unit is %q after the fix, want active", unit())
	}
	if out, err := f.cmd("", "check").CombinedOutput(); err != nil {
		t.Errorf("check after the fix: %v\n%s", err, out)
	}
}
