package switchover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/faultinject"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// envBinary names the rke2-proxy-backend binary the end-to-end test runs
// (built from this tree when unset; set it to run an older build).
const envBinary = "RKE2PB_SWITCH_BINARY"

// fakeSystemctl plays systemd and RKE2 for a fixture root: `daemon-reload`
// runs the real generator into the root's /run/systemd/generator, and
// `restart` of the RKE2 unit runs the real `apply` as RKE2's ExecStartPre
// does, with the --backend the generator's drop-in gives it (apply takes
// the node lock: a switch holding it would make apply wait), then, as
// kube-proxy, loads kube-proxy's rules into the backend apply planned. It
// never calls the host's systemctl. Each call can pause (see pauser).
const fakeSystemctl = `#!/bin/sh
# systemctl for the fixture root: plays systemd and RKE2, never the host's.
ctl='@CTL@' bin='@BIN@' root='@ROOT@'
. "$ctl/pause.sh"
echo $$ >"$ctl/running/$$"
trap 'rm -f "$ctl/running/$$"' EXIT
echo "$*" >>"$ctl/calls"
# The verify unit, played when $ctl/verify-unit exists: the real verify,
# its outcome the unit's state.
verify_unit() {
	if RKE2_PROXY_BACKEND_ROOT="$root" "$bin" verify --wait 2s >>"$ctl/verify-unit.log" 2>&1; then
		echo active >"$ctl/verify-unit"
	else
		echo failed >"$ctl/verify-unit"
	fi
}
# RKE2 runs when a test says so.
active() { [ -e "$ctl/active" ] && [ "$1" = rke2-agent.service ]; }
case "$1" in
is-active)
	# adopt asks one unit at a time.
	active "$3" && exit 0
	exit 3
	;;
is-enabled) exit 1 ;;
start) exit 0 ;;
daemon-reload)
	RKE2_PROXY_BACKEND_ROOT="$root" "$bin" generate "$root/run/systemd/generator" >>"$ctl/generator.log" 2>&1
	exit 0
	;;
restart)
	[ "$2" = --no-block ] && shift
	case "$2" in
	rke2-agent.service)
		pause restart
		forced=$(sed -n 's/^ExecStartPre=.* apply \(--backend=[a-z-]*\).*/\1/p' "$root/run/systemd/generator/rke2-agent.service.d/50-rke2-proxy-backend.conf" 2>/dev/null)
		RKE2_PROXY_BACKEND_ROOT="$root" "$bin" apply --no-trial $forced >>"$ctl/apply.log" 2>&1 || exit 1
		b=$(sed -n 's/^ *"backend": "\(.*\)",$/\1/p' "$root/run/rke2-proxy-backend/plan.json" | head -n 1)
		# A test makes kube-proxy fail on a backend by naming it here.
		if [ -e "$ctl/broken-$b" ]; then echo "$b" >"$ctl/kube-proxy"; exit 0; fi
		case "$b" in
		nftables)
			"$bin" render expected --backend nftables | nft -f - || exit 1
			echo "$b" >"$ctl/kube-proxy"
			exit 0
			;;
		iptables-legacy) t=iptables-legacy-restore ;;
		iptables-nft) t=iptables-nft-restore ;;
		*) echo "fake RKE2 plays no $b" >&2; exit 1 ;;
		esac
		# kube-proxy's own rules: kubelet's hint and canary chains are
		# kubelet's, written with the host's alternative, and not played.
		"$bin" render expected --backend "$b" --family ipv4 | grep -v -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY | "$t" -w 5 || exit 1
		echo "$b" >"$ctl/kube-proxy"
		# kubelet, on a root with an iptables alternative: its chains,
		# with the host's iptables, where they are not yet.
		if alt=$(readlink "$root/etc/alternatives/iptables"); then
			k=iptables-legacy
			case "$alt" in *nft*) k=iptables-nft ;; esac
			for tb in mangle nat filter; do "$k" -w 5 -t $tb -N KUBE-KUBELET-CANARY 2>/dev/null; done
			"$k" -w 5 -t mangle -N KUBE-IPTABLES-HINT 2>/dev/null
		fi
		# RKE2's Wants= on the verify unit, when a test plays it.
		[ -e "$ctl/verify-unit" ] && verify_unit
		exit 0
		;;
	rke2-proxy-backend-verify.service)
		pause rerun
		[ -e "$ctl/verify-unit" ] && verify_unit
		exit 0
		;;
	*) exit 5 ;;
	esac
	;;
show)
	# show -p ActiveState -- UNIT...: switch asks for RKE2's units at once,
	# one block each, a blank line between, as systemd prints them.
	if [ "$2 $3 $4" = "-p ActiveState --" ]; then
		shift 4
		sep=
		for u; do
			printf "$sep"; sep='\n'
			if active "$u"; then echo ActiveState=active; else echo ActiveState=inactive; fi
		done
		exit 0
	fi
	# show -P ActiveState rke2-proxy-backend-verify.service
	[ "$4" = rke2-proxy-backend-verify.service ] || exit 1
	case "$(cat "$ctl/verify-unit" 2>/dev/null)" in failed) echo failed ;; *) echo inactive ;; esac
	;;
*) exit 1 ;;
esac
`

// pauseSh is sourced by the fake systemctl and the PATH shims: while
// $ctl/stepping exists, each call leaves a file in $ctl/wait and waits
// until the test removes it (the test reads the journal there and sends
// its signal at the step it wants).
const pauseSh = `pause() {
	[ -e "$ctl/stepping" ] || return 0
	f="$ctl/wait/$$-$1"
	: >"$f"
	i=0
	while [ -e "$f" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
}
`

// shim pauses, then runs the real save or restore tool: cleanup's
// restore (a *-save only when a jump is not kube-proxy's own) and the hint
// tidy's reads are where the clean steps can be caught. It counts as
// running (settle waits for it): a restore a killed switch left paused
// writes once released, and on a node it would have finished long before
// the operator's --resume or --rollback.
const shim = `#!/bin/sh
ctl='@CTL@'
. "$ctl/pause.sh"
echo $$ >"$ctl/running/$$"
pause "$(basename "$0")"
exec /usr/sbin/"$(basename "$0")" "$@"
`

type fixture struct {
	t                 *testing.T
	bin, dir, root    string
	ctl, shims        string
	original, target  string
	link              string // the config's link target, "" for a plain file
	kubeProxyAnswered atomic.Int64
}

func newFixture(t *testing.T, bin string, link bool) *fixture {
	original := "# chosen by hand after the 2026 outage\nbackend: iptables-legacy # NAS kernel\nverify:\n  wait: 3m\n"
	return newFixtureWith(t, bin, link, original, strings.Replace(original, "iptables-legacy", "iptables-nft", 1))
}

// newFixtureWith is newFixture with the operator config original (on which
// RKE2 starts on iptables-legacy) and what a switch to iptables-nft makes
// of it.
func newFixtureWith(t *testing.T, bin string, link bool, original, target string) *fixture {
	dir := t.TempDir()
	f := &fixture{t: t, bin: bin, dir: dir, root: filepath.Join(dir, "root"), ctl: filepath.Join(dir, "ctl"), shims: filepath.Join(dir, "shims")}
	f.original, f.target = original, target
	files := map[string]string{
		"root/proc/sys/kernel/osrelease":                       "6.12.0\n",
		"root/proc/net/ip_tables_names":                        "nat\nfilter\nmangle\n",
		"root/usr/local/lib/systemd/system/rke2-agent.service": "[Service]\nType=notify\n",
		"ctl/pause.sh": pauseSh,
	}
	for p, data := range files {
		write(t, filepath.Join(dir, p), data, 0o644)
	}
	for _, d := range []string{"ctl/wait", "ctl/running"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	sub := strings.NewReplacer("@CTL@", f.ctl, "@BIN@", bin, "@ROOT@", f.root)
	write(t, filepath.Join(f.root, "usr/bin/systemctl"), sub.Replace(fakeSystemctl), 0o755)
	for _, tool := range []string{"iptables-legacy-save", "iptables-nft-save", "iptables-legacy-restore", "iptables-nft-restore"} {
		write(t, filepath.Join(f.shims, tool), sub.Replace(shim), 0o755)
	}
	cfg := filepath.Join(f.root, hostfs.ConfigFile)
	if link {
		f.link = "/srv/config-management/rke2-proxy-backend.yaml"
		write(t, filepath.Join(f.root, f.link), f.original, 0o640)
		os.MkdirAll(filepath.Dir(cfg), 0o755)
		if err := os.Symlink(f.link, cfg); err != nil {
			t.Fatal(err)
		}
	} else {
		write(t, cfg, f.original, 0o640)
	}
	// RKE2 up on iptables-legacy, as a boot left it: the generator's
	// drop-in, apply's plan, and kube-proxy's rules (a real restart through
	// the fake).
	f.daemonReload()
	if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
		t.Fatalf("first start: %v\n%s", err, out)
	}
	return f
}

// xtablesLock passes the test process's xtables lock file to a child whose
// environment is otherwise fixed.
func xtablesLock() string {
	return nstest.EnvXtablesLock + "=" + os.Getenv(nstest.EnvXtablesLock)
}

// daemonReload runs the fake's daemon-reload: the real generator.
func (f *fixture) daemonReload() {
	f.t.Helper()
	c := exec.Command(filepath.Join(f.root, "usr/bin/systemctl"), "daemon-reload")
	c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", xtablesLock()}
	if out, err := c.CombinedOutput(); err != nil {
		f.t.Fatalf("daemon-reload: %v\n%s", err, out)
	}
}

// generated is the backend the generator's drop-in in dir (under the root)
// gives apply.
func (f *fixture) generated(dir string) string {
	data, _ := os.ReadFile(filepath.Join(f.root, dir, "rke2-agent.service.d/50-rke2-proxy-backend.conf"))
	m := regexp.MustCompile(`(?m)^ExecStartPre=.* apply --backend=([a-z-]+)`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// planned is the backend plan.json records.
func (f *fixture) planned() string {
	data, _ := os.ReadFile(filepath.Join(f.root, hostfs.PlanFile))
	var p struct {
		Decision struct {
			Backend string `json:"backend"`
		} `json:"decision"`
	}
	json.Unmarshal(data, &p)
	return p.Decision.Backend
}

// nextBoot is the backend the generator gives RKE2 at the next boot: /run
// (the plan, the generator's output) is gone then.
func (f *fixture) nextBoot() string {
	f.t.Helper()
	plan := filepath.Join(f.root, hostfs.PlanFile)
	data, err := os.ReadFile(plan)
	if err == nil {
		os.Remove(plan)
		defer os.WriteFile(plan, data, 0o644)
	}
	c := f.cmd("", "generate", filepath.Join(f.root, "next-boot"))
	if out, err := c.CombinedOutput(); err != nil {
		f.t.Fatalf("generate: %v\n%s", err, out)
	}
	defer os.RemoveAll(filepath.Join(f.root, "next-boot"))
	return f.generated("next-boot")
}

// switchBinaryInNetns builds the binary (outside the namespace, once:
// the child inherits envBinary) and runs the calling test in a network
// namespace of its own; false: the caller returns (see nstest.InNetns).
func switchBinaryInNetns(t *testing.T) (string, bool) {
	bin := os.Getenv(envBinary)
	// An earlier test's build went with its TempDir: build again.
	if _, err := os.Stat(bin); (bin == "" || err != nil) && os.Getenv("NSTEST_NETNS_TEST") == "" && os.Geteuid() == 0 {
		bin = filepath.Join(t.TempDir(), "rke2-proxy-backend")
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rke2-proxy-backend").CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		os.Setenv(envBinary, bin)
	}
	return os.Getenv(envBinary), nstest.InNetns(t)
}

func write(t *testing.T, p, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// cmd is the binary with args under the fixture root ("systemctl-restart"
// runs the fake's RKE2 restart instead).
func (f *fixture) cmd(stdin string, args ...string) *exec.Cmd {
	var c *exec.Cmd
	if len(args) == 1 && args[0] == "systemctl-restart" {
		c = exec.Command(filepath.Join(f.root, "usr/bin/systemctl"), "restart", "rke2-agent.service")
	} else {
		c = exec.Command(f.bin, args...)
	}
	// The test process's own xtables lock (nstest) goes along: with the
	// machine's /run/xtables.lock the fake restart's `-w 5` gave up behind
	// another package's legacy writes in `go test ./...` at load 8.
	c.Env = []string{"PATH=" + f.shims + ":/usr/sbin:/usr/bin:/sbin:/bin", "RKE2_PROXY_BACKEND_ROOT=" + f.root, "LANG=C", xtablesLock()}
	c.Stdin = strings.NewReader(stdin)
	return c
}

type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

func (f *fixture) start(args ...string) *proc {
	p := &proc{cmd: f.cmd("", args...), done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("switch did not end\nstderr:\n%s", &p.stderr)
	}
	return -1
}

func (f *fixture) journal() *switchjournal.Journal {
	j, err := switchjournal.File{Root: hostfs.New(f.root)}.Read()
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// stepTo drives a stepping switch until a pause happens while the journal
// records want (phase switch), and returns that pause's point without
// releasing it; false when the switch ended first.
func (f *fixture) stepTo(p *proc, want string) (string, bool) {
	return f.stepToIn(p, switchjournal.PhaseSwitch, want)
}

func (f *fixture) stepToIn(p *proc, phase, want string) (string, bool) {
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-p.done:
			p.done <- err
			return "", false
		default:
		}
		entries, _ := os.ReadDir(filepath.Join(f.ctl, "wait"))
		for _, e := range entries {
			j := f.journal()
			if j != nil && j.Phase == phase && j.Step == want {
				return e.Name(), true
			}
			// The verdict is in before the rerun: no journal then.
			if j == nil && want == "rerun-verify-unit" && strings.HasSuffix(e.Name(), "-rerun") {
				return e.Name(), true
			}
			os.Remove(filepath.Join(f.ctl, "wait", e.Name()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("no pause at %s", want)
	return "", false
}

// releaseAll stops the stepping and lets every paused call go.
func (f *fixture) releaseAll() {
	os.Remove(filepath.Join(f.ctl, "stepping"))
	entries, _ := os.ReadDir(filepath.Join(f.ctl, "wait"))
	for _, e := range entries {
		os.Remove(filepath.Join(f.ctl, "wait", e.Name()))
	}
}

// settle waits for fake RKE2 restarts a killed switch left running (as
// systemd's job outlives a killed systemctl), and for its tools (shim).
func (f *fixture) settle() {
	for i := 0; i < 600; i++ {
		f.releaseAll()
		e, _ := os.ReadDir(filepath.Join(f.ctl, "running"))
		alive := 0
		for _, r := range e {
			var pid int
			fmt.Sscan(r.Name(), &pid)
			// A fake killed with its switch's process group left its file.
			if pid > 0 && syscall.Kill(pid, 0) == nil {
				alive++
			}
		}
		if alive == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.t.Fatal("the fake RKE2 restart never ended")
}

// ends asserts the node is whole: the config is want byte for byte (a
// link still the same link, the file behind it with its mode), no journal,
// no apply that had to wait for a switch's lock, and verify passing.
func (f *fixture) ends(want string, log fmt.Stringer) {
	t := f.t
	t.Helper()
	cfg := filepath.Join(f.root, hostfs.ConfigFile)
	file := cfg
	if f.link != "" {
		got, err := os.Readlink(cfg)
		if err != nil || got != f.link {
			t.Errorf("the config is no longer the link to %s: %q %v", f.link, got, err)
		}
		file = filepath.Join(f.root, f.link)
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != want {
		t.Errorf("config is %q (%v), want %q\nlog:\n%s", got, err, want, log)
	}
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 {
		t.Errorf("config file mode: %v %v", fi.Mode(), err)
	}
	if left := f.temps(); len(left) > 0 {
		t.Errorf("temp files left: %q", left)
	}
	if _, err := os.Stat(filepath.Join(f.root, hostfs.SwitchJournal)); !errors.Is(err, os.ErrNotExist) {
		j, _ := os.ReadFile(filepath.Join(f.root, hostfs.SwitchJournal))
		t.Errorf("journal left: %s", j)
	}
	if a, _ := os.ReadFile(filepath.Join(f.ctl, "apply.log")); regexp.MustCompile(`waiting up to .* switch|switch .*still holds`).Match(a) {
		t.Errorf("apply (RKE2's ExecStartPre) had to wait for a switch's node lock:\n%s", a)
	}
	expect := "iptables-legacy"
	if want == f.target {
		expect = "iptables-nft"
	}
	// The record, the generator's last output and the next boot's agree
	// with where the switch says kube-proxy is.
	if got := f.planned(); got != expect {
		a, _ := os.ReadFile(filepath.Join(f.ctl, "apply.log"))
		t.Errorf("plan.json says %s, want %s\napply:\n%s", got, expect, a)
	}
	if got := f.generated("run/systemd/generator"); got != expect {
		g, _ := os.ReadFile(filepath.Join(f.ctl, "generator.log"))
		t.Errorf("the generator's drop-in says --backend=%s, want %s\ngenerator:\n%s", got, expect, g)
	}
	if got := f.nextBoot(); got != expect {
		t.Errorf("the next boot's generator says --backend=%s, want %s", got, expect)
	}
	out, err := f.cmd("", "verify", "--wait", "20s", "--expect", expect).CombinedOutput()
	if err != nil {
		t.Errorf("verify --expect %s: %v\n%s", expect, err, out)
	}
}

// tempDirs are where the switch's atomic writes make their temps.
func (f *fixture) tempDirs() []string {
	dirs := []string{filepath.Dir(hostfs.SwitchJournal), filepath.Dir(hostfs.ConfigFile)}
	if f.link != "" {
		dirs = append(dirs, filepath.Dir(f.link))
	}
	return dirs
}

// plantTemps leaves what a switch killed inside its config and journal
// writes leaves: a 0600 copy of the config, a half journal.
func (f *fixture) plantTemps() {
	cfg := hostfs.ConfigFile
	if f.link != "" {
		cfg = f.link
	}
	write(f.t, filepath.Join(f.root, filepath.Dir(cfg), "."+filepath.Base(cfg)+".tmp-2718281828"), f.original, 0o600)
	write(f.t, filepath.Join(f.root, filepath.Dir(hostfs.SwitchJournal), ".switch.json.tmp-3141592653"), "{\"schema\": 1, \"fr", 0o600)
}

// temps lists the temp files in tempDirs.
func (f *fixture) temps() []string {
	var out []string
	for _, d := range f.tempDirs() {
		entries, _ := os.ReadDir(filepath.Join(f.root, d))
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") || strings.HasSuffix(e.Name(), ".link-tmp") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// TestSwitchBinaryInterrupted runs the real binary against a fixture root
// whose systemctl is a fake playing RKE2, in a network namespace of its
// own with a stand-in for kube-proxy's /proxyMode, and interrupts a switch
// from iptables-legacy to iptables-nft at each step with SIGTERM, SIGINT
// and SIGKILL; each kill is finished by --resume, --rollback, or a plain
// rerun (which must refuse and name both) then --rollback.
func TestSwitchBinaryInterrupted(t *testing.T) {
	bin, current, ok := switchHarness(t)
	if !ok {
		return
	}
	// pausedAt starts a switch from iptables-legacy to iptables-nft on a
	// fresh fixture (config file already written when written is true) and
	// returns it paused at step, with the point it paused in.
	pausedAt := func(t *testing.T, written bool, step string) (*fixture, *proc, string) {
		t.Helper()
		flush()
		f := newFixture(t, bin, written)
		current.Store(f)
		p := f.stepping("switch", "--to", "iptables-nft", "--timeout", "30s")
		point, ok := f.stepTo(p, step)
		if !ok {
			t.Fatalf("the switch ended before %s\n%s", step, &p.stderr)
		}
		return f, p, point
	}
	// interrupt starts a switch as pausedAt does and sends it sig at step
	// st; it returns the fixture once the switch ended, with its exit code
	// and stderr.
	interrupt := func(t *testing.T, written bool, st string, sig syscall.Signal) (*fixture, int, string) {
		t.Helper()
		if inProcessStep(st) {
			return signalledAt(t, bin, current, written, st, sig)
		}
		f, p, point := pausedAt(t, written, st)
		p.cmd.Process.Signal(sig)
		if sig != syscall.SIGKILL {
			time.Sleep(100 * time.Millisecond)
			f.releaseAll()
		}
		code := p.wait(t)
		f.settle()
		t.Logf("%v at %s (paused in %s): exit %d", sig, st, point, code)
		return f, code, p.stderr.String()
	}
	steps := []string{"clean-target", "restart", "wait", "clean-old", "kubelet-hints", "verify", "rerun-verify-unit"}
	for _, st := range steps {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(fmt.Sprintf("%v at %s", sig, st), func(t *testing.T) {
				f, code, stderr := interrupt(t, st == "wait", st, sig)
				t.Logf("%v at %s: exit %d\n%s", sig, st, code, stderr)
				log := bytes.NewBufferString(stderr)
				switch st {
				case "clean-target":
					if code != 1 || !strings.Contains(stderr, "nothing changed") {
						t.Errorf("exit %d, want 1 with nothing changed", code)
					}
					f.ends(f.original, log)
				case "rerun-verify-unit":
					if code != 0 {
						t.Errorf("exit %d after the verdict, want 0", code)
					}
					f.ends(f.target, log)
				default:
					if code != 1 || !strings.Contains(stderr, "rolled back") {
						t.Errorf("exit %d, want 1 and rolled back", code)
					}
					f.ends(f.original, log)
				}
			})
		}
		for _, finish := range []string{"--resume", "--rollback", "plain"} {
			t.Run(fmt.Sprintf("SIGKILL at %s then %s", st, finish), func(t *testing.T) {
				f, _, stderr := interrupt(t, st == "restart", st, syscall.SIGKILL)
				var log bytes.Buffer
				log.WriteString(stderr)
				j := f.journal()
				if st == "rerun-verify-unit" {
					if j != nil {
						t.Errorf("journal kept after the verdict: %+v", j)
					}
					f.ends(f.target, &log)
					return
				}
				if j == nil || j.Step != st {
					t.Fatalf("journal after kill -9 at %s: %+v", st, j)
				}
				// A kill inside a write leaves its temp: the next run removes it.
				f.plantTemps()
				want := f.original
				args := []string{"switch", finish}
				switch finish {
				case "--resume":
					want = f.target
				case "plain":
					out, err := f.cmd("", "switch", "--to", "iptables-nft", "--timeout", "30s").CombinedOutput()
					log.Write(out)
					if err == nil || !strings.Contains(string(out), "switch --resume") || !strings.Contains(string(out), "switch --rollback") {
						t.Fatalf("a plain rerun over the journal did not refuse naming --resume and --rollback: %v\n%s", err, out)
					}
					args = []string{"switch", "--rollback"}
				}
				out, err := f.cmd("", append(args, "--timeout", "30s")...).CombinedOutput()
				log.Write(out)
				if err != nil {
					t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, &log)
				}
				f.ends(want, &log)
			})
		}
	}

	// The config write has no call to pause in: a kill there leaves the
	// journal at write-config with the file either untouched or written.
	for _, written := range []bool{false, true} {
		for _, finish := range []string{"--resume", "--rollback"} {
			t.Run(fmt.Sprintf("SIGKILL at write-config (file written: %v) then %s", written, finish), func(t *testing.T) {
				f, p, _ := pausedAt(t, written, "restart")
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait(t)
				f.settle()
				// The journal one step back, the file as the case says, and
				// RKE2 started (by itself: a reboot) on what the file says.
				flush()
				j := f.journal()
				j.Step = "write-config"
				if err := (switchjournal.File{Root: hostfs.New(f.root)}).Write(j); err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(f.root, hostfs.ConfigFile)
				if f.link != "" {
					file = filepath.Join(f.root, f.link)
				}
				if !written {
					os.WriteFile(file, []byte(f.original), 0o640)
				}
				if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				want := f.original
				if finish == "--resume" {
					want = f.target
				}
				out, err := f.cmd("", "switch", finish, "--timeout", "30s").CombinedOutput()
				if err != nil {
					t.Errorf("switch %s: %v\n%s", finish, err, out)
				}
				f.ends(want, bytes.NewBuffer(out))
			})
		}
	}

	// A second signal during the rollback stops it where it is, journaled
	// (exit 1 naming --rollback); --rollback then finishes it.
	for _, at := range []string{"restart", "wait"} {
		t.Run("second SIGTERM in the rollback's "+at, func(t *testing.T) {
			f, p, _ := pausedAt(t, false, "wait")
			p.cmd.Process.Signal(syscall.SIGTERM)
			if _, ok := f.stepToIn(p, switchjournal.PhaseRollback, at); !ok {
				t.Fatalf("the rollback never reached %s\n%s", at, &p.stderr)
			}
			p.cmd.Process.Signal(syscall.SIGTERM)
			time.Sleep(100 * time.Millisecond)
			f.releaseAll()
			code := p.wait(t)
			f.settle()
			if code != 1 || !strings.Contains(p.stderr.String(), "the rollback stopped at step "+at) || !strings.Contains(p.stderr.String(), "switch --rollback") {
				t.Fatalf("exit %d, want 1 with the rollback stopped at %s\n%s", code, at, &p.stderr)
			}
			if j := f.journal(); j == nil || j.Phase != switchjournal.PhaseRollback || j.Step != at {
				t.Fatalf("journal: %+v", j)
			}
			out, err := f.cmd("", "switch", "--rollback", "--timeout", "30s").CombinedOutput()
			if err != nil {
				t.Errorf("switch --rollback: %v\n%s", err, out)
			}
			f.ends(f.original, bytes.NewBuffer(append(p.stderr.Bytes(), out...)))
		})
	}

	// Two switches at once: the second is refused, naming the first, both
	// while the first holds the lock (waiting for kube-proxy) and while it
	// let go of it for the restart; the first then finishes.
	for _, at := range []string{"restart", "wait"} {
		t.Run("second switch during "+at, func(t *testing.T) {
			f, p, _ := pausedAt(t, false, at)
			startedAt := time.Now()
			out, err := f.cmd("", "switch", "--to", "iptables-nft", "--timeout", "30s").CombinedOutput()
			if err == nil || !strings.Contains(string(out), fmt.Sprintf("another rke2-proxy-backend switch (pid %d)", p.cmd.Process.Pid)) {
				t.Errorf("second switch: %v\n%s", err, out)
			}
			if took := time.Since(startedAt); took > 10*time.Second {
				t.Errorf("the second switch took %v to refuse", took)
			}
			for _, flag := range []string{"--resume", "--rollback"} {
				if out, err := f.cmd("", "switch", flag).CombinedOutput(); err == nil || !strings.Contains(string(out), "another rke2-proxy-backend switch") {
					t.Errorf("switch %s while the first runs: %v\n%s", flag, err, out)
				}
			}
			f.releaseAll()
			if code := p.wait(t); code != 0 {
				t.Errorf("the first switch exited %d\n%s", code, &p.stderr)
			}
			f.ends(f.target, &p.stderr)
			calls, _ := os.ReadFile(filepath.Join(f.ctl, "calls"))
			if !strings.Contains(string(calls), "daemon-reload") {
				t.Errorf("the fixture's systemctl was not used:\n%s", calls)
			}
			// Which RKE2 unit runs is asked once, for both units.
			if strings.Contains(string(calls), "is-active") || !strings.Contains(string(calls), "show -p ActiveState -- rke2-agent.service rke2-server.service\n") {
				t.Errorf("switch asked systemd which unit runs other than once:\n%s", calls)
			}
		})
	}
}

// switchHarness is what the fixture tests share: the binary, the calling
// test run in a network namespace of its own (false: the caller returns),
// the tools, and kube-proxy's /proxyMode answering "iptables" on
// 127.0.0.1:10249, pausing as the fixture current holds says.
func switchHarness(t *testing.T) (string, *atomic.Pointer[fixture], bool) {
	bin, ok := switchBinaryInNetns(t)
	if !ok {
		return "", nil, false
	}
	for _, tool := range []string{"iptables-legacy-restore", "iptables-nft-restore", "iptables-legacy-save", "iptables-nft-save"} {
		nstest.Tool(t, tool)
	}
	// kube-proxy's metrics server, in this namespace (whose loopback
	// starts down).
	if out, err := exec.Command(nstest.Tool(t, "ip"), "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:10249")
	if err != nil {
		t.Fatal(err)
	}
	current := new(atomic.Pointer[fixture])
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := current.Load(); f != nil {
			f.httpPause()
		}
		fmt.Fprint(w, "iptables")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return bin, current, true
}

// flush empties both iptables backends of the namespace.
func flush() {
	flushTool("iptables-legacy")
	flushTool("iptables-nft")
}

// flushTool empties one iptables backend of the namespace.
func flushTool(tool string) {
	for _, tb := range []string{"filter", "nat", "mangle"} {
		exec.Command(tool, "-w", "5", "-t", tb, "-F").Run()
		exec.Command(tool, "-w", "5", "-t", tb, "-X").Run()
	}
}

func (f *fixture) stepping(args ...string) *proc {
	write(f.t, filepath.Join(f.ctl, "stepping"), "", 0o644)
	return f.start(args...)
}

// httpPause is the pause of kube-proxy's /proxyMode (the wait and verify
// steps ask it).
func (f *fixture) httpPause() {
	if _, err := os.Stat(filepath.Join(f.ctl, "stepping")); err != nil {
		return
	}
	p := filepath.Join(f.ctl, "wait", fmt.Sprintf("http-%d", f.kubeProxyAnswered.Add(1)))
	os.WriteFile(p, nil, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if _, err := os.Stat(p); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSwitchBinaryMigratesOffIPVS runs the real binary's migration off
// ipvs on a fixture root in a network namespace of its own: RKE2 (the
// fake systemctl) runs kube-proxy in ipvs mode over iptables-legacy, and
// the namespace holds what ipvs mode adds on real netfilter (kube-proxy's
// KUBE-* ipsets, its KUBE-IPVS-FILTER chain using them, a KUBE-LOAD-BALANCER
// chain stranded in iptables-nft) beside another owner's set and chain
// (fail2ban's). While RKE2's config pins proxy-mode=ipvs the switch prints
// the translation report and refuses, changing nothing; once the operator
// removed the item it restarts RKE2 into nftables mode, sweeps ipvs's
// leftovers (only kube-proxy's) and verify passes. kube-proxy's own ipvs
// rules are played by the fake: iptables mode's skeleton plus the ipvs
// chains above (the oracle's ipvs mode is not in this tree yet).
func TestSwitchBinaryMigratesOffIPVS(t *testing.T) {
	bin, ok := switchBinaryInNetns(t)
	if !ok {
		return
	}
	for _, tool := range []string{"iptables-legacy-restore", "iptables-nft-restore", "iptables-legacy-save", "iptables-nft-save", "nft", "ipset"} {
		nstest.Tool(t, tool)
	}
	nstest.Sh(t, "ip link set lo up")
	ln, err := net.Listen("tcp", "127.0.0.1:10249")
	if err != nil {
		t.Fatal(err)
	}
	var f *fixture
	// kube-proxy's /proxyMode: the mode the last RKE2 start planned.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		data, _ := os.ReadFile(filepath.Join(f.root, hostfs.PlanFile))
		var p struct {
			Decision struct {
				ProxyMode string `json:"proxy_mode"`
			} `json:"decision"`
		}
		json.Unmarshal(data, &p)
		fmt.Fprint(w, p.Decision.ProxyMode)
	})}
	f = newFixture(t, bin, false)
	go srv.Serve(ln)
	defer srv.Close()

	// RKE2 v1.36.3 (documents nftables mode), as its data dir says.
	data := filepath.Join(f.root, "var/lib/rancher/rke2/data/v1.36.3-rke2r1-0123456789ab")
	write(t, filepath.Join(data, "bin/kubectl"), "#!fake kubectl\n", 0o755)
	write(t, filepath.Join(data, ".extracted"), "", 0o644)
	if err := os.Symlink(filepath.Join("/var/lib/rancher/rke2/data/v1.36.3-rke2r1-0123456789ab", "bin"), filepath.Join(f.root, "var/lib/rancher/rke2/bin")); err != nil {
		t.Fatal(err)
	}
	rke2Config := func(args ...string) {
		write(t, filepath.Join(f.root, hostfs.RKE2ConfigFile), "kube-proxy-arg:\n  - "+strings.Join(args, "\n  - ")+"\n", 0o600)
	}
	rke2Config("proxy-mode=ipvs", "ipvs-scheduler=sh", "ipvs-strict-arp=true")
	if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
		t.Fatalf("start in ipvs mode: %v\n%s", err, out)
	}
	plan, _ := os.ReadFile(filepath.Join(f.root, hostfs.PlanFile))
	if !strings.Contains(string(plan), `"proxy_mode": "ipvs"`) {
		t.Fatalf("the plan does not say ipvs:\n%s", plan)
	}
	nstest.Sh(t, `
ipset create KUBE-CLUSTER-IP hash:ip,port family inet comment
ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 comment
ipset create KUBE-LOAD-BALANCER hash:ip,port family inet comment
ipset create f2b-sshd hash:ip family inet
iptables-legacy -w -N KUBE-IPVS-FILTER
iptables-legacy -w -A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
iptables-legacy -w -A KUBE-IPVS-FILTER -p tcp -m set --match-set KUBE-NODE-PORT-TCP dst -j RETURN
iptables-legacy -w -A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER
iptables-nft -w -t nat -N KUBE-LOAD-BALANCER
iptables-nft -w -t nat -A KUBE-LOAD-BALANCER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
iptables-nft -w -N f2b-sshd
iptables-nft -w -A f2b-sshd -m set --match-set f2b-sshd src -j REJECT
iptables-nft -w -A INPUT -p tcp --dport 22 -j f2b-sshd
`)
	cfgBefore, _ := os.ReadFile(filepath.Join(f.root, hostfs.ConfigFile))

	// Pinned: the report, then the refusal naming the item; nothing changed.
	out, err := f.cmd("", "switch", "--to", "nftables", "--timeout", "30s").CombinedOutput()
	t.Logf("pinned:\n%s", out)
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), `config.yaml line 1, kube-proxy-arg item "proxy-mode=ipvs"), the mode kube-proxy would come back in`) ||
		!strings.Contains(string(out), `kube-proxy-arg "ipvs-scheduler=sh": nftables mode has no hashing scheduler`) {
		t.Errorf("pinned: exit %d, want 2 with the report and the item named", code)
	}
	if cfg, _ := os.ReadFile(filepath.Join(f.root, hostfs.ConfigFile)); string(cfg) != string(cfgBefore) || f.journal() != nil {
		t.Errorf("the refused switch changed the config (%q) or left a journal", cfg)
	}

	// The operator removes proxy-mode=ipvs (RKE2 not restarted).
	rke2Config("ipvs-scheduler=sh", "ipvs-strict-arp=true")
	p := f.start("switch", "--to", "nftables", "--timeout", "30s")
	code := p.wait(t)
	t.Logf("migration: exit %d\nstdout:\n%s\nstderr:\n%s", code, &p.stdout, &p.stderr)
	if code != 0 {
		a, _ := os.ReadFile(filepath.Join(f.ctl, "apply.log"))
		t.Fatalf("the migration failed; apply (RKE2's ExecStartPre) said:\n%s", a)
	}
	for _, want := range []string{"switch: migrating off ipvs: kube-proxy runs ipvs mode over iptables-legacy's iptables", `"ipvs-strict-arp=true": not needed`,
		"switch: kube-proxy left ipvs mode: it runs nftables mode on nftables, verified"} {
		if !strings.Contains(p.stdout.String(), want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, want := range []string{"[finished] remove what ipvs mode left", "removed 3 kube-proxy ipvs leftover(s)", "IPVS not in this kernel", "removed 1 kube-proxy object(s) from iptables-nft"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if sets := nstest.Sh(t, "ipset list -n"); sets != "f2b-sshd\n" {
		t.Errorf("sets after the migration %q, want only fail2ban's", sets)
	}
	// kubelet's KUBE-FIREWALL (played by the fake) is kubelet's, and stays.
	if legacy := nstest.Sh(t, "iptables-legacy-save"); strings.Contains(legacy, "KUBE-IPVS-FILTER") || strings.Contains(legacy, "KUBE-SERVICES") {
		t.Errorf("kube-proxy's chains left in iptables-legacy:\n%s", legacy)
	}
	if nft := nstest.Sh(t, "iptables-nft-save"); strings.Contains(nft, "KUBE-LOAD-BALANCER") || !strings.Contains(nft, "-A INPUT -p tcp -m tcp --dport 22 -j f2b-sshd") {
		t.Errorf("iptables-nft after the migration:\n%s", nft)
	}
	if cfg, _ := os.ReadFile(filepath.Join(f.root, hostfs.ConfigFile)); !strings.Contains(string(cfg), "backend: nftables") || f.journal() != nil {
		t.Errorf("config %q, journal %+v", cfg, f.journal())
	}
	if out, err := f.cmd("", "verify", "--wait", "20s", "--expect", "nftables").CombinedOutput(); err != nil {
		t.Errorf("verify --expect nftables: %v\n%s", err, out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return -1
}

// inProcessStep: on the fixture, these steps run no tool a shim can pause
// in (clean-target finds nothing stale, kubelet-hints no kubelet chain:
// both read in-process), so a signal reaches them through the tracer.
func inProcessStep(st string) bool { return st == "clean-target" || st == "kubelet-hints" }

// recordedSteps are the forward journal records a switch on the fixture
// writes, in order.
var recordedSteps = []string{"clean-target", "write-config", "restart", "wait", "clean-old", "kubelet-hints", "verify"}

// signalledAt runs a switch from iptables-legacy to iptables-nft on a
// fresh fixture under the fault tracer and sends it sig as it begins
// writing st's journal record (the record lands, then the switch sees
// the signal, before or in the step; for the first record, earlier);
// SIGKILL is sent as it begins the next record instead, so the journal
// says st. The calls are counted in
// a clean traced run first.
func signalledAt(t *testing.T, bin string, current *atomic.Pointer[fixture], written bool, st string, sig syscall.Signal) (*fixture, int, string) {
	t.Helper()
	if !faultinject.Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	run := func(fault *faultinject.Fault) (*fixture, *faultinject.Result) {
		flush()
		f := newFixture(t, bin, written)
		current.Store(f)
		cmd := f.cmd("", "switch", "--to", "iptables-nft", "--timeout", "30s")
		cmd.Stdin = nil
		res, err := faultinject.Trace(cmd, []string{f.root}, fault, 3*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		f.settle()
		return f, res
	}
	_, clean := run(nil)
	var opens []faultinject.Call
	for _, c := range clean.Calls {
		if c.Class == "open" && strings.HasPrefix(filepath.Base(c.Path), "."+filepath.Base(hostfs.SwitchJournal)+".tmp-") {
			opens = append(opens, c)
		}
	}
	i := slices.Index(recordedSteps, st)
	if sig == syscall.SIGKILL {
		i++
	}
	if clean.Exit != 0 || len(opens) != len(recordedSteps) || i >= len(opens) {
		t.Fatalf("clean traced switch: %d journal records, want %d\n%s", len(opens), len(recordedSteps), clean)
	}
	fault := faultinject.Fault{Class: "open", N: opens[i].N, Signal: sig}
	switch {
	case sig == syscall.SIGKILL:
		fault = faultinject.Fault{Class: "open", N: opens[i].N, Kill: true}
	case i == 0:
		// Before the first record, with the handler in place (the lock's
		// open): the switch sees the signal right after that record, at
		// its first check, however slow a loaded machine makes the
		// handler. A later record's signal may land a step on, which
		// rolls back all the same.
		fault = faultinject.Fault{Class: clean.Calls[0].Class, N: clean.Calls[0].N, Signal: sig}
	}
	f, res := run(&fault)
	if res.Injected == nil {
		t.Fatalf("%s: never reached\n%s", fault, res)
	}
	t.Logf("%s (%s)", fault, strings.ReplaceAll(res.Injected.String(), f.root, ""))
	return f, res.Exit, res.Stderr
}
