package switchover

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envCost asks TestSwitchCost for that many pairs (bench/switch.sh sets
// it): a measurement, not a check, so it runs only when asked.
const envCost = "RKE2PB_SWITCH_COST"

// costLabels names a forward switch's ops in the order its log numbers
// them (no ipvs sweep on this fixture).
var costLabels = []string{"clean-target", "write-config", "restart", "wait", "clean-old", "kubelet-hints", "verify", "rerun-verify-unit"}

var opLine = regexp.MustCompile(`op\((\d+)\): \[(started|finished|failed)\]`)

// TestSwitchCost times the real switch on the fixture of
// TestSwitchBinaryInterrupted (the fake systemctl's restart runs the real
// apply and loads kube-proxy's rules for real) against that restart alone,
// and against a daemon-reload (the real generator) and the restart, which
// a switch by hand needs, interleaved (restart, reload and restart, then a
// switch, alternating between iptables-legacy and iptables-nft), and
// prints each median pair ratio with min-max, the load, and the switch's step-cost table: each step's median,
// the time before the first step and after the last, and between steps
// (the journal's writes).
func TestSwitchCost(t *testing.T) {
	pairs, _ := strconv.Atoi(os.Getenv(envCost))
	if pairs <= 0 && os.Getenv("NSTEST_NETNS_TEST") == "" {
		t.Skipf("a measurement: set %s=PAIRS (bench/switch.sh)", envCost)
	}
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
	restart := func() time.Duration {
		start := time.Now()
		if out, err := f.cmd("", "systemctl-restart").CombinedOutput(); err != nil {
			t.Fatalf("restart: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	// What a switch by hand runs after editing the config: the generator
	// must write RKE2's drop-in anew before the restart.
	reloadRestart := func() time.Duration {
		start := time.Now()
		f.daemonReload()
		restart()
		return time.Since(start)
	}
	// one switch: its wall time and, per cost row, its share.
	one := func(b string) (time.Duration, map[string]time.Duration) {
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
		return took, rows
	}
	for i := range 2 {
		one(to[i%2])
	}
	load0 := loadavg()
	var restarts, reloads, switches, ratios, reloadRatios []float64
	steps := map[string][]float64{}
	for i := range pairs {
		r := restart()
		rr := reloadRestart()
		s, rows := one(to[i%2])
		restarts, reloads, switches = append(restarts, ms(r)), append(reloads, ms(rr)), append(switches, ms(s))
		ratios, reloadRatios = append(ratios, float64(s)/float64(r)), append(reloadRatios, float64(s)/float64(rr))
		for k, v := range rows {
			steps[k] = append(steps[k], ms(v))
		}
	}
	load1 := loadavg()
	fmt.Printf("switch cost: %d rounds (the fake's restart alone, daemon-reload and restart, then a switch), load %s -> %s on %d cores\n", pairs, load0, load1, numCPU())
	fmt.Printf("  restart alone           %6.1f ms median (min %.1f, max %.1f)\n", median(restarts), slices.Min(restarts), slices.Max(restarts))
	fmt.Printf("  daemon-reload + restart %6.1f ms median (min %.1f, max %.1f)\n", median(reloads), slices.Min(reloads), slices.Max(reloads))
	fmt.Printf("  switch                  %6.1f ms median (min %.1f, max %.1f)\n", median(switches), slices.Min(switches), slices.Max(switches))
	fmt.Printf("  pair ratio vs restart alone           %5.2fx median (min %.2f, max %.2f); goal <= 2x\n", median(ratios), slices.Min(ratios), slices.Max(ratios))
	fmt.Printf("  pair ratio vs daemon-reload + restart %5.2fx median (min %.2f, max %.2f)\n", median(reloadRatios), slices.Min(reloadRatios), slices.Max(reloadRatios))
	fmt.Printf("  step cost (median ms):\n")
	for _, k := range append([]string{"before the first step"}, append(costLabels, "between steps (journal)", "after the last step")...) {
		fmt.Printf("    %-24s %6.1f\n", k, median(steps[k]))
	}
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
