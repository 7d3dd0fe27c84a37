package switchover

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// TestSwitchBinaryGeneratorMidSwitch: the generator runs (a daemon-reload:
// a package upgrade, an operator, adopt) while a switch runs, and after the
// switch, its rollback or its --resume/--rollback ends, plan.json, the
// generator's drop-in and the next boot's generator all name the backend
// the switch says kube-proxy is on (ends). With backend: auto the rollback
// used to leave kube-proxy on the target: auto keeps the backend this
// boot's plan records, which the switch's restart had made the target.
func TestSwitchBinaryGeneratorMidSwitch(t *testing.T) {
	bin, current, ok := switchHarness(t)
	if !ok {
		return
	}
	configs := map[string][2]string{
		"explicit": {"backend: iptables-legacy # NAS kernel\n", "backend: iptables-nft # NAS kernel\n"},
		"auto":     {"backend: auto\nprefer: [iptables-legacy, iptables-nft]\n", "backend: iptables-nft\nprefer: [iptables-legacy, iptables-nft]\n"},
	}
	for name, cfg := range configs {
		fresh := func(t *testing.T) *fixture {
			flush()
			f := newFixtureWith(t, bin, false, cfg[0], cfg[1])
			current.Store(f)
			return f
		}
		t.Run(name+": a daemon-reload at every pause of a switch", func(t *testing.T) {
			f := fresh(t)
			p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
			reloads := 0
			for deadline := time.Now().Add(90 * time.Second); ; {
				if time.Now().After(deadline) {
					t.Fatal("the switch did not end")
				}
				select {
				case err := <-p.done:
					p.done <- err
				default:
					entries, _ := os.ReadDir(filepath.Join(f.ctl, "wait"))
					for _, e := range entries {
						f.daemonReload()
						reloads++
						os.Remove(filepath.Join(f.ctl, "wait", e.Name()))
					}
					time.Sleep(5 * time.Millisecond)
					continue
				}
				break
			}
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit %d\n%s", code, &p.stderr)
			}
			t.Logf("%d daemon-reloads during the switch", reloads)
			f.ends(f.target, &p.stderr)
		})
		for _, at := range []string{"restart", "wait", "verify"} {
			t.Run(fmt.Sprintf("%s: SIGTERM at %s, a daemon-reload in the rollback", name, at), func(t *testing.T) {
				f := fresh(t)
				p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
				if _, ok := f.stepTo(p, at); !ok {
					t.Fatalf("the switch ended before %s\n%s", at, &p.stderr)
				}
				f.daemonReload()
				p.cmd.Process.Signal(syscall.SIGTERM)
				if _, ok := f.stepToIn(p, "rollback", "wait"); ok {
					f.daemonReload()
				}
				f.releaseAll()
				if code := p.wait(t); code != 1 || !strings.Contains(p.stderr.String(), "rolled back") {
					t.Errorf("exit %d, want 1 and rolled back", code)
				}
				f.ends(f.original, &p.stderr)
			})
		}
		for _, finish := range []string{"--resume", "--rollback"} {
			t.Run(fmt.Sprintf("%s: SIGKILL at wait, a daemon-reload, then %s", name, finish), func(t *testing.T) {
				f := fresh(t)
				p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
				if _, ok := f.stepTo(p, "wait"); !ok {
					t.Fatalf("the switch ended before wait\n%s", &p.stderr)
				}
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait(t)
				f.settle()
				f.daemonReload()
				out, err := f.cmd("", "switch", finish, "--timeout", "30s").CombinedOutput()
				if err != nil {
					t.Errorf("switch %s: %v\n%s", finish, err, out)
				}
				want := f.original
				if finish == "--resume" {
					want = f.target
				}
				f.ends(want, bytes.NewBuffer(append(p.stderr.Bytes(), out...)))
			})
		}
	}
}

// pausedChildren lists the pauses (files in ctl/wait) of pid's children:
// the shims a command ran.
func (f *fixture) pausedChildren(pid int) []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(f.ctl, "wait"))
	for _, e := range entries {
		var child int
		if _, err := fmt.Sscanf(e.Name(), "%d-", &child); err != nil {
			continue
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 1 && f[1] == fmt.Sprint(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// ended says whether p has exited (keeping its outcome for wait).
func (p *proc) ended() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// until polls cond for up to a minute.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// rounds is how often the concurrency test starts all four at once.
var rounds = 8

// TestConcurrentCommandsInNetns: apply, switch, cleanup and adopt on one
// node at the same time, real processes on a fixture root in a network
// namespace. Each does its work or refuses naming the other; the
// operator's config ends as the original or the target byte for byte,
// RKE2's drop-in is one whole version, the plan says what RKE2 was given,
// and no rule is lost (verify passes).
func TestConcurrentCommandsInNetns(t *testing.T) {
	bin, current, ok := switchHarness(t)
	if !ok {
		return
	}
	fresh := func(t *testing.T) *fixture {
		flush()
		f := newFixture(t, bin, false)
		current.Store(f)
		return f
	}

	// The interleaving that lost rules: cleanup read the plan (iptables-
	// legacy) just before the switch's restart had apply record
	// iptables-nft and kube-proxy write there, then removed those rules as
	// stranded. Now cleanup takes the node lock and refuses while the
	// switch's journal names a live switch.
	t.Run("cleanup --backend iptables-nft while a switch restarts onto it", func(t *testing.T) {
		f := fresh(t)
		p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
		point, ok := f.stepTo(p, "restart")
		if !ok {
			t.Fatalf("the switch ended before its restart\n%s", &p.stderr)
		}
		c := f.start("cleanup", "--backend", "iptables-nft")
		until(t, "cleanup to end or read iptables-nft", func() bool { return c.ended() || len(f.pausedChildren(c.cmd.Process.Pid)) > 0 })
		// RKE2 restarts onto iptables-nft; the switch goes on to its wait.
		os.Remove(filepath.Join(f.ctl, "wait", point))
		until(t, "kube-proxy on iptables-nft", func() bool {
			kp, _ := os.ReadFile(filepath.Join(f.ctl, "kube-proxy"))
			return strings.TrimSpace(string(kp)) == "iptables-nft"
		})
		for !c.ended() {
			for _, w := range f.pausedChildren(c.cmd.Process.Pid) {
				os.Remove(filepath.Join(f.ctl, "wait", w))
			}
			time.Sleep(10 * time.Millisecond)
		}
		code := c.wait(t)
		t.Logf("cleanup: exit %d\n%s%s", code, &c.stdout, &c.stderr)
		if want := fmt.Sprintf("a switch (pid %d) is moving kube-proxy from iptables-legacy to iptables-nft", p.cmd.Process.Pid); code != 1 || !strings.Contains(c.stderr.String(), want) {
			t.Errorf("cleanup exit %d, want 1 naming the switch (%q)", code, want)
		}
		f.releaseAll()
		if code := p.wait(t); code != 0 {
			t.Errorf("the switch exited %d\n%s", code, &p.stderr)
		}
		f.ends(f.target, &p.stderr)
	})

	// The interleaving that made the plan lie: adopt looked at a node
	// whose RKE2 ran without a plan (legacy rules), RKE2 restarted on the
	// operator's new iptables-nft meanwhile, and adopt's plan overwrote the
	// one apply wrote. Now adopt reads the plan again under the node lock.
	t.Run("adopt while RKE2 starts with a new backend", func(t *testing.T) {
		f := fresh(t)
		os.Remove(filepath.Join(f.root, hostfs.PlanFile))
		write(t, filepath.Join(f.ctl, "active"), "", 0o644)
		write(t, filepath.Join(f.root, hostfs.ConfigFile), f.target, 0o640)
		a := f.stepping("adopt", "--systemctl", filepath.Join(f.root, "usr/bin/systemctl"))
		until(t, "adopt to look at kube-proxy", func() bool {
			entries, _ := os.ReadDir(filepath.Join(f.ctl, "wait"))
			return len(entries) > 0 || a.ended()
		})
		os.Remove(filepath.Join(f.ctl, "stepping"))
		f.daemonReload()
		if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
			t.Fatalf("RKE2 start: %v\n%s", err, out)
		}
		f.releaseAll()
		code := a.wait(t)
		t.Logf("adopt: exit %d\n%s%s", code, &a.stdout, &a.stderr)
		if got := f.planned(); got != "iptables-nft" {
			t.Errorf("plan.json says %s after adopt, RKE2 was given iptables-nft", got)
		}
		if !strings.Contains(a.stdout.String(), "already has a plan") {
			t.Errorf("adopt does not say RKE2's start recorded a plan meanwhile")
		}
		// A switch by a config edit strands the old rules: once cleanup
		// removed them, the node verifies.
		if out, err := f.cmd("", "cleanup", "--backend", "iptables-legacy").CombinedOutput(); err != nil || !strings.Contains(string(out), "cleanup: verify passes now") {
			t.Errorf("cleanup --backend iptables-legacy: %v\n%s", err, out)
		}
	})

	// All four at once, a few times over: no interleaving forced.
	for round := range rounds {
		t.Run(fmt.Sprintf("all four at once, round %d", round), func(t *testing.T) {
			f := fresh(t)
			write(t, filepath.Join(f.ctl, "active"), "", 0o644)
			procs := map[string]*proc{}
			for name, args := range map[string][]string{
				"switch":  {"switch", "--to", "iptables-nft", "--timeout", "30s"},
				"apply":   {"apply", "--no-trial"},
				"cleanup": {"cleanup", "--backend", "iptables-legacy"},
				"adopt":   {"adopt", "--systemctl", filepath.Join(f.root, "usr/bin/systemctl")},
			} {
				procs[name] = f.start(args...)
			}
			refusal := regexp.MustCompile(`switch \(pid \d+\)|rke2-proxy-backend \w+ \(pid \d+\) holds|refusing to remove its live rules|already has a plan`)
			for name, p := range procs {
				code := p.wait(t)
				out := p.stdout.String() + p.stderr.String()
				t.Logf("%s: exit %d\n%s", name, code, out)
				switch {
				case name == "switch" && code != 0:
					t.Errorf("the switch failed")
				case code != 0 && !refusal.MatchString(out):
					t.Errorf("%s exited %d without naming what it gave way to", name, code)
				}
			}
			drop, _ := os.ReadFile(filepath.Join(f.root, "etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml"))
			if !strings.HasPrefix(string(drop), "# Generated by rke2-proxy-backend") || strings.Count(string(drop), "IPTABLES_MODE=") != 1 || !strings.Contains(string(drop), "IPTABLES_MODE=nft") {
				t.Errorf("RKE2's drop-in is not one whole version for iptables-nft:\n%s", drop)
			}
			f.ends(f.target, &procs["switch"].stderr)
		})
	}
}
