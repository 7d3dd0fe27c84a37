package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// The trial's bounds. A trial only proves or refuses: one that cannot
// tell (it timed out, waited out the xtables lock, its loader was killed)
// leaves the plan standing, unproven, so a long bound costs time only on a
// host that really hangs, while a short one made healthy nodes fall
// forward. On a first boot the kernel loads the backend's modules during
// the trial: Debian's cloud kernel under QEMU's TCG at a load of 10 took
// more than 10 s for one legacy family (issue 30's VM tier), and small ARM
// NAS boxes load modules from slow flash. RKE2's unit has
// TimeoutStartSec=0, so these bounds are all that bound apply's trial.
const (
	// TrialLockWait is how long a legacy loader waits for the xtables lock
	// (-w): another legacy writer at boot (a firewall's restore, an earlier
	// run of ours) holds it for the length of its own restore.
	TrialLockWait = 20 * time.Second
	// TrialTimeout bounds one backend's whole trial, every loader run in
	// it: three times the slowest first-boot family seen, with the lock
	// wait inside it. A search that falls forward runs one trial per
	// backend it tries, at most three.
	TrialTimeout = 60 * time.Second
)

// The bounds the trial uses (tests shorten them).
var trialLockWait, trialTimeout = TrialLockWait, TrialTimeout

// maxTrialOutput bounds what is kept of a loader's complaint.
const maxTrialOutput = 8 << 10

// TrialResult is what one trial found: at most one of Failure, Unproven
// and Skipped is set, and only Failure refuses the backend.
type TrialResult struct {
	Backend backend.Backend
	// Failure names what the kernel rejected, or the loader that is
	// missing ("" when the load worked or no trial ran).
	Failure string
	// Unproven says why the trial could not tell: the loader ran out of
	// time, waited out the xtables lock, or was killed by a signal, or no
	// loader could be started. The kernel said nothing against the
	// backend, and nothing for it.
	Unproven string
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
	ctx, cancel := context.WithTimeout(ctx, trialTimeout)
	defer cancel()
	res.Failure, res.Unproven = load(ctx, b, trialLoads(rs))
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

// load runs b's loader on each load's text, each in a network namespace
// of its own. The runs of one family go side by side (only iptables-nft
// has several, one per table, and its loader takes no lock: a run's wall
// time is mostly the kernel waiting out a grace period, not CPU); the
// families go one after another, as legacy's loaders of both families
// take the one xtables lock, and side by side the second waited out the
// first one's module loading on a slow first boot ("Can't lock
// /run/xtables.lock"). It returns the kernel's rejection (failure) or,
// when nothing was rejected, why the trial could not tell (unproven), each
// of the first run in load order that said so; both "" when every run
// loaded. A rejection ends the trial; a run that could not tell does not,
// so a later family may still show one.
func load(ctx context.Context, b backend.Backend, loads []trialLoad) (failure, unproven string) {
	argvs := make([][]string, len(loads))
	for i, l := range loads {
		argv := ruleload.Argv(b, l.fam)
		loader, err := hostfs.LookTool(argv[0], "the trial of "+string(b)+" (its loader)")
		if err != nil {
			return err.Error(), ""
		}
		argvs[i] = append([]string{loader}, withLockWait(argv[1:], trialLockWait)...)
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if lock := os.Getenv(xtablesLockEnv); lock != "" {
		// the lock file an operator (or a test process) moved
		env = append(env, xtablesLockEnv+"="+lock)
	}
	rejected := make([]string, len(loads))
	untold := make([]string, len(loads))
	for _, fam := range trialFamilies {
		var wg sync.WaitGroup
		for i, l := range loads {
			if l.fam != fam || strings.TrimSpace(l.text) == "" {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				left := time.Until(deadlineOf(ctx))
				out, err := boundexec.Run(ctx, boundexec.Command{
					Argv:      argvs[i],
					Env:       env,
					Timeout:   max(left, time.Millisecond),
					MaxOutput: maxTrialOutput,
					Stdin:     l.text,
					NewNetns:  true,
				})
				if err == nil {
					return
				}
				loader := filepath.Base(argvs[i][0])
				if why := couldNotTell(ctx, out.Stderr, err); why != "" {
					untold[i] = cut(fmt.Sprintf("loading kube-proxy's %s rules for one service into a throwaway network namespace could not tell whether the kernel runs %s: %s: %s", l.fam, b, loader, why))
					return
				}
				rejected[i] = trialFailure(l.fam, loader, l.text, out.Stderr, err)
			}()
		}
		wg.Wait()
		for i := range loads {
			if rejected[i] != "" {
				return rejected[i], ""
			}
		}
	}
	for _, u := range untold {
		if u != "" {
			return "", u
		}
	}
	return "", ""
}

// xtablesLockEnv names the lock file legacy iptables takes
// (/run/xtables.lock when unset).
const xtablesLockEnv = "XTABLES_LOCKFILE"

// withLockWait sets the loader's -w (ruleload.Argv's lock wait) to wait.
func withLockWait(args []string, wait time.Duration) []string {
	args = slices.Clone(args)
	if i := slices.Index(args, "-w"); i >= 0 && i+1 < len(args) {
		args[i+1] = strconv.Itoa(max(1, int(wait/time.Second)))
	}
	return args
}

// deadlineOf is ctx's deadline (Trial always sets one; far off without).
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(trialTimeout)
}

// couldNotTell says why a loader's failure says nothing about the kernel
// ("" when it is the kernel's rejection): the trial ran out of time or was
// stopped, the loader was killed by a signal or could not be started, or
// it gave up waiting for the xtables lock, which another legacy writer
// held. Everything else a loader says when it exits non-zero (EINVAL on
// "Could not fetch rule set generation id", "Table does not exist (do you
// need to insmod?)", "Protocol not supported", "Extension X revision 0 not
// supported", modprobe's FATAL) is the kernel refusing.
func couldNotTell(ctx context.Context, stderr string, err error) string {
	if errors.Is(err, boundexec.ErrTimeout) {
		return fmt.Sprintf("it did not finish within the trial's %s and was killed", trialTimeout)
	}
	if ctx.Err() != nil {
		return fmt.Sprintf("the trial was stopped (%v)", ctx.Err())
	}
	for _, lock := range []string{"Another app is currently holding the xtables lock", "Can't lock ", "can't open lock file"} {
		if strings.Contains(stderr, lock) {
			return fmt.Sprintf("it gave up waiting for the xtables lock after %s, which another legacy iptables writer held (%s)", trialLockWait, firstComplaint(stderr))
		}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Sprintf("it could not be started: %v", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("it was killed by signal %s", ws.Signal())
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
	why := firstComplaint(stderr)
	if why == "" {
		why = err.Error()
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
	return cut(msg)
}

// cut bounds a trial's words: a loader's line can be long.
func cut(msg string) string {
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
