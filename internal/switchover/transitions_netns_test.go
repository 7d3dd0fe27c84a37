package switchover

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
