package switchover

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// envCost asks TestSwitchCost for that many rounds (bench/switch.sh sets
// it; one without it).
const envCost = "RKE2PB_SWITCH_COST"

// costLabels names a forward switch's ops in the order its log numbers
// them (no ipvs sweep on this fixture).
var costLabels = []string{"clean-target", "write-config", "restart", "wait", "clean-old", "kubelet-hints", "verify", "rerun-verify-unit"}

// tookLine is UnitRestarter's line for one systemctl call it made.
var tookLine = regexp.MustCompile(`switch: systemctl (daemon-reload|restart) .*took (\S+) \((\S+) CPU\)`)

var opLine = regexp.MustCompile(`op\((\d+)\): \[(started|finished|failed)\]`)

// TestSwitchCost times the real switch on the fixture of
// TestSwitchBinaryInterrupted (the fake systemctl's restart runs the real
// apply and loads kube-proxy's rules for real) against that restart alone,
// against a daemon-reload (the real generator) and the restart, and
// against the move by hand onto the other backend: the operator config's
// backend: line edited, daemon-reload and restart, the old backend's rules
// left behind (then flushed outside the timed window, so every round starts
// alike). Per round, alternating between iptables-legacy and iptables-nft
// (the restart rows run on the backend the node is on, the switch and the
// move by hand go opposite ways, so each row alternates; a switch is paired
// with the round whose rows load kube-proxy's rules into the backend it
// loads them into), it prints each median pair ratio with min-max, each
// row's median per backend, the load, and the switch's step-cost
// table: each step's median, the time before the first step and after the
// last, and between steps (the journal's writes).
func TestSwitchCost(t *testing.T) {
	// Unasked, two rounds (one each way): the table's parsing of the
	// switch's op lines stays checked with the tests. Asked, an even count:
	// restoring kube-proxy's rules costs iptables-nft several times what it
	// costs iptables-legacy, so a row with one more round onto iptables-nft
	// had its median among the dear ones (21 rounds gave the switch 11 of
	// them and the restart rows 10, the 2.2x its restart step seemed to
	// cost over them).
	asked, _ := strconv.Atoi(os.Getenv(envCost))
	pairs := max(asked, 1)
	pairs += pairs % 2
	bin, _, ok := switchHarness(t)
	if !ok {
		return
	}
	f := newFixture(t, bin, false)
	// The real tools, not the pausing shims: what a node runs.
	if err := os.RemoveAll(f.shims); err != nil {
		t.Fatal(err)
	}
	to := []string{"iptables-nft", "iptables-legacy"}
	// run runs c to its end: wall and CPU time (user and system, its
	// children's included: the fake's apply, generator and tools).
	run := func(c *exec.Cmd) (wall, cpu time.Duration) {
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		return time.Since(start), c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	restart := func() (time.Duration, time.Duration) { return run(f.cmd("", "systemctl-restart")) }
	// What a switch by hand runs after editing the config: the generator
	// must write RKE2's drop-in anew before the restart.
	// Its calls' last wall and CPU times, for the move by hand's share.
	var calls [2][2]time.Duration
	reloadRestart := func() (time.Duration, time.Duration) {
		reload := exec.Command(filepath.Join(f.root, "usr/bin/systemctl"), "daemon-reload")
		reload.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", xtablesLock()}
		w1, c1 := run(reload)
		w2, c2 := restart()
		calls = [2][2]time.Duration{{w1, c1}, {w2, c2}}
		return w1 + w2, c1 + c2
	}
	// byHand moves the node to b as an operator does without switch:
	// backend: set in the operator config (the line switch edits, so the
	// bytes are those switch writes), daemon-reload, restart.
	cfg := filepath.Join(f.root, hostfs.ConfigFile)
	byHand := func(b string) (time.Duration, time.Duration) {
		text := f.original
		if b == "iptables-nft" {
			text = f.target
		}
		start := time.Now()
		if err := os.WriteFile(cfg, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		w, c := reloadRestart()
		if got := f.planned(); got != b {
			t.Fatalf("moved by hand to %s, the plan records %q", b, got)
		}
		return took + w, c
	}
	// one switch: its wall and CPU time and, per cost row, its share.
	one := func(b string) (time.Duration, time.Duration, map[string]time.Duration) {
		c := f.cmd("", "switch", "--to", b, "--timeout", "30s")
		stderr, err := c.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		rows := map[string]time.Duration{}
		last, lastOp, log := start, 0, ""
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			now := time.Now()
			log += sc.Text() + "\n"
			// The restart step's systemctl calls, as the switch timed them
			// (spawn and wait included): wall, and CPU under "cpu ".
			if m := tookLine.FindStringSubmatch(sc.Text()); m != nil {
				w, werr := time.ParseDuration(m[2])
				c, cerr := time.ParseDuration(m[3])
				if werr != nil || cerr != nil {
					t.Fatalf("%q: %v %v", sc.Text(), werr, cerr)
				}
				rows["systemctl "+m[1]] += w
				rows["cpu systemctl "+m[1]] += c
				continue
			}
			m := opLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			switch {
			case m[2] != "started":
				rows[costLabels[n-1]] += now.Sub(last)
			case n == 1:
				rows["before the first step"] += now.Sub(last)
			default:
				rows["between steps (journal)"] += now.Sub(last)
			}
			last, lastOp = now, n
		}
		if err := c.Wait(); err != nil || lastOp != len(costLabels) {
			t.Fatalf("switch --to %s: %v (last op %d)\n%s", b, err, lastOp, log)
		}
		took := time.Since(start)
		rows["after the last step"] = took - last.Sub(start)
		if rows["systemctl daemon-reload"] == 0 || rows["systemctl restart"] == 0 {
			t.Fatalf("switch --to %s logged no time for its systemctl calls\n%s", b, log)
		}
		rows["the switch's own"] = rows["restart"] - rows["systemctl daemon-reload"] - rows["systemctl restart"]
		return took, c.ProcessState.UserTime() + c.ProcessState.SystemTime(), rows
	}
	// Warm-up (none for the unasked rounds): a switch there and back.
	for i := range min(2, asked) {
		one(to[i%2])
	}
	load0 := loadavg()
	// Per round: wall and CPU of the restart, of daemon-reload and the
	// restart, of the switch and of the move by hand. Even rounds run on
	// iptables-legacy and switch to iptables-nft, then move back by hand;
	// odd rounds move to iptables-nft by hand, then switch back. So a
	// switch loads kube-proxy's rules into the backend the other rows of
	// the next (or last) round load them into: it is paired with those.
	var wall, cpu [4][]float64
	steps := map[string][]float64{}
	for i := range pairs {
		var rw, rc, lw, lc, sw, scpu, hw, hc time.Duration
		var rows map[string]time.Duration
		restarts := func() {
			rw, rc = restart()
			lw, lc = reloadRestart()
		}
		hand := func(b string) {
			hw, hc = byHand(b)
			for j, c := range []string{"by hand daemon-reload", "by hand restart"} {
				steps[c] = append(steps[c], ms(calls[j][0]))
				steps["cpu "+c] = append(steps["cpu "+c], ms(calls[j][1]))
			}
			// What a move by hand leaves: kube-proxy's rules in the old
			// backend. Flushed untimed, as the switch's clean-old would.
			flushTool(to[slices.Index(to, b)^1])
		}
		if i%2 == 0 {
			restarts()
			sw, scpu, rows = one(to[0])
			hand(to[1])
		} else {
			hand(to[0])
			restarts()
			sw, scpu, rows = one(to[1])
		}
		for j, d := range []time.Duration{rw, lw, sw, hw} {
			wall[j] = append(wall[j], ms(d))
		}
		for j, d := range []time.Duration{rc, lc, scpu, hc} {
			cpu[j] = append(cpu[j], ms(d))
		}
		for k, v := range rows {
			steps[k] = append(steps[k], ms(v))
		}
	}
	load1 := loadavg()
	fmt.Printf("switch cost: %d rounds (the fake's restart alone, daemon-reload and restart, a switch, a move by hand), load %s -> %s on %d cores\n", pairs, load0, load1, numCPU())
	for j, what := range []string{"restart alone", "daemon-reload + restart", "switch", "by hand"} {
		fmt.Printf("  %-24s %6.1f ms wall median (min %.1f, max %.1f), %6.1f ms CPU median (children included)\n", what, median(wall[j]), slices.Min(wall[j]), slices.Max(wall[j]), median(cpu[j]))
		// The switch's even rounds go to iptables-nft; the other rows'
		// odd rounds run on it.
		nft := 1
		if j == 2 {
			nft = 0
		}
		fmt.Printf("  %-24s %6.1f ms wall median on iptables-nft, %.1f on iptables-legacy\n", "", median(every2(wall[j], nft)), median(every2(wall[j], 1-nft)))
	}
	for _, j := range []int{0, 1, 3} {
		what := []string{"restart alone", "daemon-reload + restart", "", "by hand"}[j]
		wr, cr := ratios(wall[2], swapped(wall[j])), ratios(cpu[2], swapped(cpu[j]))
		fmt.Printf("  switch / %-24s wall %5.2fx median (min %.2f, max %.2f), CPU %5.2fx (min %.2f, max %.2f)\n", what, median(wr), slices.Min(wr), slices.Max(wr), median(cr), slices.Min(cr), slices.Max(cr))
	}
	fmt.Printf("  goal: switch <= 2x restart\n")
	fmt.Printf("  step cost (median ms):\n")
	for _, k := range append([]string{"before the first step"}, append(costLabels, "between steps (journal)", "after the last step")...) {
		fmt.Printf("    %-24s %6.1f\n", k, median(steps[k]))
		if k != "restart" {
			continue
		}
		// Its calls as the switch timed them (spawn and wait included),
		// and the rest: the lock given up and taken back, the journal and
		// the plan read, the reload's check.
		for i, c := range []string{"systemctl daemon-reload", "systemctl restart"} {
			h := []string{"by hand daemon-reload", "by hand restart"}[i]
			fmt.Printf("      %-22s %6.1f (%.1f CPU; by hand %.1f, %.1f CPU)\n", c, median(steps[c]), median(steps["cpu "+c]), median(steps[h]), median(steps["cpu "+h]))
		}
		// Its max shows a lock wait (apply's poll is 50 ms) had there been one.
		fmt.Printf("      %-22s %6.1f (max %.1f)\n", "the switch's own", median(steps["the switch's own"]), slices.Max(steps["the switch's own"]))
	}
}

// swapped pairs each round with its neighbour (0 with 1, 2 with 3, ...):
// the round whose rows load kube-proxy's rules into the backend the
// switch of this one does.
func swapped(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i^1]
	}
	return out
}

// every2 is xs[from], xs[from+2], ...
func every2(xs []float64, from int) []float64 {
	var out []float64
	for i := from; i < len(xs); i += 2 {
		out = append(out, xs[i])
	}
	return out
}

// ratios are a[i]/b[i], pair by pair.
func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "\nprocessor") + 1
}
