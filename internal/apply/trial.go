package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// Proof by trial. Reading the kernel config is not proof: EL10 configures
// nft_compat and xt_* as =m and ships them only in kernel-modules-extra, a
// PREEMPT_RT kernel has no legacy xtables whatever the config says. So
// before RKE2 is told a backend, apply has the backend's own loader load
// kube-proxy's footprint for one service (the built-in renderer's output)
// into a throwaway network namespace, made by the clone that starts the
// loader (unshare -n without its exec) and gone, with every rule in it,
// when the loader exits. The kernel autoloads the modules the rules need,
// as it will for kube-proxy, so a module that cannot load fails the trial.

// TrialTimeout bounds one loader run; a one-service load takes milliseconds.
const TrialTimeout = 10 * time.Second

// maxTrialOutput bounds what is kept of a loader's complaint.
const maxTrialOutput = 8 << 10

// TrialResult is what one trial found.
type TrialResult struct {
	Backend backend.Backend
	// Failure names what the kernel rejected, or the loader that is
	// missing ("" when the load worked or no trial ran).
	Failure string
	// Skipped says why no trial ran (not root, nothing rendered).
	Skipped string
	Took    time.Duration
}

// Trial loads backend b's footprint for one service (Kubernetes version k,
// zero for the newest layout) into throwaway network namespaces.
func Trial(ctx context.Context, b backend.Backend, k rke2.KubeVersion) (res TrialResult) {
	start := time.Now()
	res.Backend = b
	defer func() { res.Took = time.Since(start) }()
	if os.Geteuid() != 0 {
		res.Skipped = "not running as root, so no network namespace can be made"
		return res
	}
	rs, err := expected.Render(expected.Options{Backend: b, Kubernetes: k, Services: 1})
	if err != nil {
		res.Skipped = fmt.Sprintf("kube-proxy's footprint could not be rendered: %v", err)
		return res
	}
	res.Failure = load(ctx, b, trialLoads(rs))
	return res
}

var trialFamilies = []rules.Family{rules.IPv4, rules.IPv6}

// trialLoad is one loader run: the text it reads and its family.
type trialLoad struct {
	fam  rules.Family
	text string
}

// trialLoads cuts rs into loader runs. iptables-nft-restore commits at
// every COMMIT line, and once a namespace has a commit behind it, every
// nfnetlink socket the loader closes waits for that commit's RCU grace
// period (the kernel flushes its destroy work first): the one it opens for
// each new match or target it asks the kernel about, and its own at exit.
// A whole family in one run waited two grace periods in a row (the nat
// table's matches are asked about after filter's commit), 10-140 ms each
// on this 2-core VM depending on its load. So for iptables-nft each table with rules starts
// a run of its own, in a namespace of its own, and the runs wait side by
// side; a table without rules (mangle: kubelet's and kube-proxy's chains
// only) asks the kernel about nothing and rides at the end of a run, which
// spares a namespace and a loader (about 3 ms of CPU each, which counts
// when the node is busy). The tables are independent (no jump crosses
// them), so the kernel is asked exactly what kube-proxy's rules ask. nft -f
// commits once and iptables-legacy-restore writes xtables blobs without
// nfnetlink: for them one run per family already waits once.
func trialLoads(rs *rules.Ruleset) []trialLoad {
	var loads []trialLoad
	sorted := rules.Normalize(rs)
	for _, fam := range trialFamilies {
		if rs.Backend != backend.IptablesNFT {
			loads = append(loads, trialLoad{fam, rules.FormatFamily(rs, fam)})
			continue
		}
		var runs [][]rules.Table
		var riders []rules.Table
		for _, t := range sorted.Tables {
			switch {
			case t.Family != fam:
			case hasRules(t):
				runs = append(runs, []rules.Table{t})
			default:
				riders = append(riders, t)
			}
		}
		if len(runs) == 0 {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], riders...)
		for _, run := range runs {
			var text strings.Builder
			for _, t := range run {
				text.WriteString(rules.FormatFamily(&rules.Ruleset{Backend: rs.Backend, Tables: []rules.Table{t}}, fam))
			}
			loads = append(loads, trialLoad{fam, text.String()})
		}
	}
	return loads
}

func hasRules(t rules.Table) bool {
	for _, c := range t.Chains {
		if len(c.Rules) > 0 {
			return true
		}
	}
	return false
}

// load runs b's loader on each load's text, each in a network namespace of
// its own, side by side (a run's wall time is mostly the kernel waiting
// out a grace period, not CPU), and returns the first failure in load
// order ("" when nothing failed).
func load(ctx context.Context, b backend.Backend, loads []trialLoad) string {
	argvs := make([][]string, len(loads))
	for i, l := range loads {
		argv := ruleload.Argv(b, l.fam)
		loader, err := hostfs.LookTool(argv[0], "the trial of "+string(b)+" (its loader)")
		if err != nil {
			return err.Error()
		}
		argvs[i] = append([]string{loader}, argv[1:]...)
	}
	failures := make([]string, len(loads))
	var wg sync.WaitGroup
	for i, l := range loads {
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := boundexec.Run(ctx, boundexec.Command{
				Argv:      argvs[i],
				Env:       []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
				Timeout:   TrialTimeout,
				MaxOutput: maxTrialOutput,
				Stdin:     l.text,
				NewNetns:  true,
			})
			if err != nil {
				failures[i] = trialFailure(l.fam, filepath.Base(argvs[i][0]), l.text, out.Stderr, err)
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
// When the kernel refuses a rule, iptables-nft 1.8.9 prints the banner alone
// on its line and the reason ("line 3: RULE_APPEND failed (Invalid
// argument): ...") on the next, so a banner with nothing after it is skipped.
// Its "Warning: Extension X revision 0 not supported" lines come first when
// nf_tables does not answer at all, before the reason ("Could not fetch
// rule set generation id: Invalid argument" on a NAS kernel): a warning is
// the complaint only when nothing else is said.
func firstComplaint(stderr string) string {
	warning := ""
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line+" ", "): "); i > 0 && strings.Contains(line[:i], " v") {
			line = strings.TrimSpace(line[i+2:])
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "Warning: "):
			if warning == "" {
				warning = line
			}
		default:
			return line
		}
	}
	return warning
}
