package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/loadcmd"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// Proof by trial. Reading the kernel config is not proof: EL10 configures
// nft_compat and xt_* as =m and ships them only in kernel-modules-extra, a
// PREEMPT_RT kernel has no legacy xtables whatever the config says. So
// before RKE2 is told a backend, apply has the backend's own loader load
// kube-proxy's footprint for one service (the built-in renderer's output)
// into a throwaway network namespace: `unshare -n LOADER`, the way bench
// isolates its loads, with the namespace (and every rule in it) gone when
// the loader exits. The kernel autoloads the modules the rules need, as it
// will for kube-proxy, so a module that cannot load fails the trial.

// TrialTimeout bounds one loader run; a one-service load takes milliseconds.
const TrialTimeout = 10 * time.Second

// maxTrialOutput bounds what is kept of a loader's complaint.
const maxTrialOutput = 8 << 10

// Unshare is util-linux's unshare, looked up in PATH like the loaders.
var Unshare = "unshare"

// TrialResult is what one trial found.
type TrialResult struct {
	Backend backend.Backend
	// Failure names what the kernel rejected ("" when the load worked or
	// the trial could not run).
	Failure string
	// Skipped says why no trial ran (not root, no unshare or loader).
	Skipped string
	Took    time.Duration
}

// Trial loads backend b's footprint for one service (Kubernetes version k,
// zero for the newest layout) into a throwaway network namespace.
func Trial(ctx context.Context, b backend.Backend, k rke2.KubeVersion) (res TrialResult) {
	start := time.Now()
	res.Backend = b
	defer func() { res.Took = time.Since(start) }()
	if os.Geteuid() != 0 {
		res.Skipped = "not running as root, so no network namespace can be made"
		return res
	}
	unshare, err := exec.LookPath(Unshare)
	if err != nil {
		res.Skipped = "no unshare command (util-linux) to make a throwaway network namespace"
		return res
	}
	rs, err := expected.Render(expected.Options{Backend: b, Kubernetes: k, Services: 1})
	if err != nil {
		res.Skipped = fmt.Sprintf("kube-proxy's footprint could not be rendered: %v", err)
		return res
	}
	texts := map[rules.Family]string{}
	for _, fam := range trialFamilies {
		texts[fam] = rules.FormatFamily(rs, fam)
	}
	res.Failure = load(ctx, unshare, b, texts)
	return res
}

var trialFamilies = []rules.Family{rules.IPv4, rules.IPv6}

// load runs b's loader on each family's text, each in a network namespace
// of its own that dies with it, and returns what failed ("" when nothing).
// The families load side by side: most of a load's wall time is the
// kernel's commit waiting out RCU grace periods, not CPU, so two at once
// cost about one at boot.
func load(ctx context.Context, unshare string, b backend.Backend, texts map[rules.Family]string) string {
	failures := make([]string, len(trialFamilies))
	var wg sync.WaitGroup
	for i, fam := range trialFamilies {
		text := texts[fam]
		if strings.TrimSpace(text) == "" {
			continue
		}
		argv := loadcmd.Argv(b, fam)
		loader, err := exec.LookPath(argv[0])
		if err != nil {
			return fmt.Sprintf("%s's loader %s is not installed", b, argv[0])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := boundexec.Run(ctx, boundexec.Command{
				Argv:      append([]string{unshare, "-n", loader}, argv[1:]...),
				Env:       []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
				Timeout:   TrialTimeout,
				MaxOutput: maxTrialOutput,
				Stdin:     text,
			})
			if err != nil {
				failures[i] = trialFailure(fam, argv[0], text, out.Stderr, err)
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		if f != "" {
			return f
		}
	}
	return ""
}

// failedLine finds the input line a loader names: iptables-restore says
// "line 12 failed" or "Error occurred at line: 12", nft "<stdin>:12:1-30:".
// Compiled on first use: only a failed trial needs it, and the generator
// (the same binary) would otherwise compile it at every boot.
var failedLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:line:? |<stdin>:|/dev/stdin:)([0-9]{1,7})`)
})

// trialFailure words what the kernel rejected: the loader's first
// complaint and the rule it was loading (which names the table, chain and
// match or expression), cut to one line.
func trialFailure(fam rules.Family, loader, input, stderr string, err error) string {
	var why string
	if errors.Is(err, boundexec.ErrTimeout) {
		why = err.Error()
	} else {
		why = firstComplaint(stderr)
		if why == "" {
			why = err.Error()
		}
	}
	msg := fmt.Sprintf("loading kube-proxy's %s rules for one service into a throwaway network namespace failed: %s: %s", fam, loader, why)
	if m := failedLine().FindStringSubmatch(stderr); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			lines := strings.Split(input, "\n")
			if n <= len(lines) {
				msg += fmt.Sprintf(" (at line %d: %s)", n, strings.TrimSpace(lines[n-1]))
			}
		}
	}
	if len(msg) > 600 {
		msg = msg[:600] + "..."
	}
	return msg
}

// firstComplaint is the loader's first non-empty stderr line, without the
// program banner iptables prefixes ("iptables-restore v1.8.9 (nf_tables): ").
func firstComplaint(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if i := strings.Index(line, "): "); i > 0 && strings.Contains(line[:i], " v") {
			line = line[i+3:]
		}
		return line
	}
	return ""
}
