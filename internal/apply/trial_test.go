package apply

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func needTrialTools(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testhost.Unmet(t, "the trial needs root to make a network namespace")
	}
	for _, tool := range tools {
		nstest.Tool(t, tool)
	}
}

// Every backend this kernel runs passes its trial: the renderer's
// one-service footprint loads with the real loaders in a real namespace.
func TestTrialLoadsEveryBackend(t *testing.T) {
	needTrialTools(t, "nft", "iptables-nft-restore", "iptables-legacy-restore")
	hostRules := hostRuleset(t)
	for _, b := range backend.All {
		r := Trial(context.Background(), b, rke2.KubeVersion{})
		if r.Failure != "" || r.Skipped != "" {
			t.Errorf("%s: failure %q, skipped %q", b, r.Failure, r.Skipped)
		}
	}
	if got := hostRuleset(t); got != hostRules {
		t.Errorf("the host namespace's rules changed during the trial:\nbefore %s\nafter  %s", hostRules, got)
	}
}

// hostRuleset is what the host namespace's nftables holds (read only).
func hostRuleset(t *testing.T) string {
	out, err := exec.Command("nft", "list", "ruleset").Output()
	if err != nil {
		t.Fatalf("nft list ruleset: %v", err)
	}
	return string(out)
}

// A real rejection by the kernel: kube-proxy's footprint plus one rule the
// kernel refuses whatever its config (xt_check_target allows DNAT only in
// nat, and iptables-restore leaves that check to the kernel), so this runs
// on every kernel; before, it used -m ipvs and skipped wherever xt_ipvs
// exists.
func TestTrialNamesWhatTheKernelRejects(t *testing.T) {
	needTrialTools(t, "iptables-nft-restore")
	rs, err := expected.Render(expected.Options{Backend: backend.IptablesNFT, Services: 1})
	if err != nil {
		t.Fatal(err)
	}
	text := rules.FormatFamily(rs, rules.IPv4)
	bad := "-A KUBE-SERVICES -p tcp -j DNAT --to-destination 10.0.0.1:80"
	if !strings.HasPrefix(text[strings.Index(text, "*"):], "*filter\n") {
		t.Fatal("the rendered footprint does not start with the filter table")
	}
	text = strings.Replace(text, "COMMIT\n", bad+"\nCOMMIT\n", 1)
	if !strings.Contains(text, bad) {
		t.Fatal("no COMMIT line to put the rule before")
	}
	failure, unproven := load(context.Background(), backend.IptablesNFT, []trialLoad{{rules.IPv4, text}})
	t.Logf("failure: %s", failure)
	if unproven != "" {
		t.Errorf("a rejection also counted as unproven: %s", unproven)
	}
	check.Says(t, "failure", failure, "ipv4 rules for one service into a throwaway network namespace failed", "iptables-nft-restore", "Invalid argument", bad)
}

// iptables-nft 1.8.9 prints its banner alone on a line when the kernel
// refuses a rule (the exact stderr of the load above on Debian 12); the
// reason is the next line, not the banner.
func TestFirstComplaintSkipsABareBanner(t *testing.T) {
	check.Table(t, "firstComplaint", firstComplaint, map[string]string{
		"iptables-nft-restore v1.8.9 (nf_tables): \nline 3: RULE_APPEND failed (Invalid argument): rule in chain INPUT\n":                    "line 3: RULE_APPEND failed (Invalid argument): rule in chain INPUT",
		"iptables-nft-restore v1.8.10 (nf_tables): Couldn't load match `statistic':No such file or directory\n\nError occurred at line: 3\n": "Couldn't load match `statistic':No such file or directory",
		"\niptables-restore: line 4 failed\n": "iptables-restore: line 4 failed",
		// the real iptables-nft-restore 1.8.9 where nf_tables does not answer
		"Warning: Extension conntrack revision 0 not supported, missing kernel module?\niptables-nft-restore v1.8.9 (nf_tables): Could not fetch rule set generation id: Invalid argument\n": "Could not fetch rule set generation id: Invalid argument",
		"Warning: Extension comment revision 0 not supported, missing kernel module?\n":                                                                                                      "Warning: Extension comment revision 0 not supported, missing kernel module?",
	})
}

// A loader that fails the way iptables-restore does when the kernel cannot
// load a match module (EL10 without kernel-modules-extra): the trial names
// the match and the rule it was loading.
func TestTrialWithALoaderThatFailsLikeTheKernel(t *testing.T) {
	needTrialTools(t)
	dir := t.TempDir()
	fake := "#!/bin/sh\ncat >/dev/null\necho \"iptables-nft-restore v1.8.10 (nf_tables): Couldn't load match \\`statistic':No such file or directory\" >&2\necho >&2\necho 'Error occurred at line: 3' >&2\nexit 2\n"
	if err := os.WriteFile(filepath.Join(dir, "iptables-nft-restore"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	r := Trial(context.Background(), backend.IptablesNFT, rke2.KubeVersion{})
	if r.Skipped != "" {
		t.Fatalf("skipped: %s", r.Skipped)
	}
	check.Says(t, "failure", r.Failure, "Couldn't load match `statistic':No such file or directory", "(at line 3: ")
	if strings.Contains(r.Failure, "\n") || strings.Contains(r.Failure, "v1.8.10") {
		t.Errorf("failure is not one clean line: %q", r.Failure)
	}
}

func TestTrialMissingLoader(t *testing.T) {
	needTrialTools(t)
	t.Setenv("PATH", t.TempDir())
	r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{})
	if !strings.Contains(r.Failure, "the trial of iptables-legacy (its loader) needs iptables-legacy-restore, which is not installed (not found in PATH): install the Debian/Ubuntu package iptables (EL: iptables-legacy") {
		t.Errorf("failure %q", r.Failure)
	}
}

// iptables-nft loads each table with rules in a run of its own, so no run
// asks the kernel about a match after a commit (see trialLoads), and the
// rule-less mangle table rides at the end of a run; every table of both
// families is still loaded. The other backends load one family per run.
func TestTrialLoadsCommitAfterTheirQuestions(t *testing.T) {
	for _, b := range backend.All {
		rs, err := expected.Render(expected.Options{Backend: b, Services: 1})
		if err != nil {
			t.Fatal(err)
		}
		loads := trialLoads(rs)
		tables := map[rules.Family]map[string]bool{}
		for _, l := range loads {
			if b == backend.IptablesNFT {
				// After the first COMMIT no rule may follow.
				if _, after, _ := strings.Cut(l.text, "COMMIT\n"); strings.Contains(after, "\n-A ") {
					t.Errorf("%s %s run has rules after its first commit:\n%s", b, l.fam, l.text)
				}
			}
			if tables[l.fam] == nil {
				tables[l.fam] = map[string]bool{}
			}
			for _, line := range strings.Split(l.text, "\n") {
				if strings.HasPrefix(line, "*") {
					tables[l.fam][line] = true
				}
			}
		}
		for _, fam := range trialFamilies {
			for _, want := range []string{"*filter", "*nat", "*mangle"} {
				if b != backend.NFTables && !tables[fam][want] {
					t.Errorf("%s %s: table %s not loaded", b, fam, want)
				}
			}
		}
		if want := map[backend.Backend]int{backend.IptablesNFT: 4, backend.IptablesLegacy: 2, backend.NFTables: 2}[b]; len(loads) != want {
			t.Errorf("%s: %d runs, want %d", b, len(loads), want)
		}
	}
}

func FuzzTrialFailure(f *testing.F) {
	f.Add("add rule\nx\n", "Error: Could not process rule: No such file or directory\n<stdin>:2:1-3: Error")
	f.Add("a\n", "iptables-restore v1.8.9 (legacy): line 99999999 failed")
	f.Fuzz(func(t *testing.T, input, stderr string) {
		msg := trialFailure(rules.IPv4, "nft", input, stderr, os.ErrInvalid)
		if len(msg) > 603 {
			t.Fatalf("unbounded: %d bytes", len(msg))
		}
	})
}

// withoutNFTablesLoaders puts, ahead of PATH, iptables-nft loaders that run
// the real ones on a kernel that answers like one without a usable
// nf_tables (Synology DSM 7, QNAP; issue 30's NAS kernel): strace has the
// kernel's reply to the ruleset generation request fail with EINVAL, and
// the real iptables-nft-restore says what it says there, "Could not fetch
// rule set generation id: Invalid argument". Everything else about the
// load is real, in a real network namespace.
func withoutNFTablesLoaders(t *testing.T) {
	t.Helper()
	needTrialTools(t, "strace", "iptables-nft-restore", "ip6tables-nft-restore", "iptables-legacy-restore", "ip6tables-legacy-restore")
	dir := t.TempDir()
	for _, loader := range []string{"iptables-nft-restore", "ip6tables-nft-restore"} {
		real, err := exec.LookPath(loader)
		if err != nil {
			t.Fatal(err)
		}
		wrapper := "#!/bin/sh\nexec strace -f -qq -o /dev/null -e trace=recvmsg -e inject=recvmsg:error=EINVAL " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, loader), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
}

// The real trial on such a kernel: iptables-nft fails with the NAS's own
// words, iptables-legacy loads.
func TestTrialOfAKernelWithoutNFTables(t *testing.T) {
	withoutNFTablesLoaders(t)
	r := Trial(context.Background(), backend.IptablesNFT, rke2.KubeVersion{})
	check.Says(t, "iptables-nft's trial", r.Failure, "iptables-nft-restore: ", "Could not fetch rule set generation id: Invalid argument")
	if r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{}); r.Failure != "" || r.Skipped != "" {
		t.Errorf("iptables-legacy's trial: failure %q, skipped %q", r.Failure, r.Skipped)
	}
}

// fakeLoaders puts, ahead of PATH, loaders for backend b's families that
// run script (sh) with the real loader's arguments, the real loader's path
// in $REAL.
func fakeLoaders(t *testing.T, b backend.Backend, script string) {
	t.Helper()
	dir := t.TempDir()
	for _, fam := range trialFamilies {
		name := filepath.Base(ruleload.Argv(b, fam)[0])
		real, err := exec.LookPath(name)
		if err != nil {
			real = "/bin/false"
		}
		body := "#!/bin/sh\nREAL=" + real + "\n" + script + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
}

// shortTrial shortens the trial's bounds for one test.
func shortTrial(t *testing.T, lockWait, timeout time.Duration) {
	t.Helper()
	oldWait, oldTimeout := trialLockWait, trialTimeout
	trialLockWait, trialTimeout = lockWait, timeout
	t.Cleanup(func() { trialLockWait, trialTimeout = oldWait, oldTimeout })
}

// A slow first boot (issue 30's VM tier: the kernel loading the legacy
// modules under QEMU at a load of 10): the loader takes 11 s and then
// loads. Before, the trial killed it at 10 s and apply took that for
// "the kernel cannot run iptables-legacy"; it is proof now.
func TestTrialWaitsForASlowFirstLoad(t *testing.T) {
	needTrialTools(t, "iptables-legacy-restore", "ip6tables-legacy-restore")
	fakeLoaders(t, backend.IptablesLegacy, "case $0 in *ip6*) ;; *) sleep 11 ;; esac\nexec $REAL \"$@\"")
	r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{})
	if r.Failure != "" || r.Unproven != "" || r.Skipped != "" {
		t.Fatalf("failure %q, unproven %q, skipped %q", r.Failure, r.Unproven, r.Skipped)
	}
	if r.Took < 11*time.Second {
		t.Errorf("took %s: the slow loader did not run", r.Took)
	}
}

// A loader that outlives the trial's bound could not tell: the trial is
// unproven, not a rejection, and names the bound.
func TestTrialPastItsBoundIsUnproven(t *testing.T) {
	needTrialTools(t)
	shortTrial(t, time.Second, 2*time.Second)
	fakeLoaders(t, backend.IptablesLegacy, "cat >/dev/null\nsleep 30")
	start := time.Now()
	r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{})
	if r.Failure != "" {
		t.Fatalf("a trial that ran out of time refused the backend: %s", r.Failure)
	}
	check.Says(t, "unproven", r.Unproven, "ipv4 rules for one service", "could not tell whether the kernel runs iptables-legacy",
		"iptables-legacy-restore: it did not finish within the trial's 2s and was killed")
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("the trial took %s, bound 2s", took)
	}
}

// The real legacy loader behind a held xtables lock (another legacy
// writer at boot): it gives up after the lock wait, which says nothing
// about the kernel. The test holds its own process's lock file
// (nstest's XTABLES_LOCKFILE), which the trial passes to the loader.
func TestTrialBehindAHeldXtablesLockIsUnproven(t *testing.T) {
	needTrialTools(t, "iptables-legacy-restore", "ip6tables-legacy-restore")
	shortTrial(t, time.Second, 20*time.Second)
	unlock := holdXtablesLock(t)
	defer unlock()
	r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{})
	if r.Failure != "" {
		t.Fatalf("a held lock refused the backend: %s", r.Failure)
	}
	check.Says(t, "unproven", r.Unproven, "could not tell whether the kernel runs iptables-legacy", "gave up waiting for the xtables lock after 1s")
	// Released, the same trial proves the backend.
	unlock()
	if r := Trial(context.Background(), backend.IptablesLegacy, rke2.KubeVersion{}); r.Failure != "" || r.Unproven != "" {
		t.Errorf("after the lock was released: failure %q, unproven %q", r.Failure, r.Unproven)
	}
}

// holdXtablesLock takes the test process's xtables lock as another legacy
// writer would; the returned func releases it (once).
func holdXtablesLock(t *testing.T) func() {
	t.Helper()
	path := os.Getenv(nstest.EnvXtablesLock)
	if path == "" {
		t.Fatal("no XTABLES_LOCKFILE: nstest sets one per test process")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }
}

// Which loader failures say nothing about the kernel: the loader's own
// words when it gives up on the lock, a signal, a loader that cannot
// start. The kernel's rejections stay rejections (the NAS's EINVAL, a
// missing legacy table, nf_tables absent, an extension, modprobe).
func TestTrialTellsRejectionFromCouldNotTell(t *testing.T) {
	needTrialTools(t)
	for _, c := range []struct {
		name, script, unproven, failure string
	}{
		{"lock 1.8.9", `echo "Another app is currently holding the xtables lock. Stopped waiting after 20s." >&2; exit 4`, "xtables lock", ""},
		{"lock flock", `echo "Can't lock /run/xtables.lock: Resource temporarily unavailable" >&2; exit 4`, "xtables lock", ""},
		{"signal", `kill -TERM $$`, "killed by signal terminated", ""},
		{"NAS", `echo "iptables-nft-restore v1.8.9 (nf_tables): Could not fetch rule set generation id: Invalid argument" >&2; exit 4`, "", "Could not fetch rule set generation id: Invalid argument"},
		{"no legacy table", `echo "iptables-restore v1.8.9 (legacy): iptables-restore: unable to initialize table 'nat'" >&2; echo "Table does not exist (do you need to insmod?)" >&2; exit 1`, "", "unable to initialize table 'nat'"},
		{"no nf_tables", `echo "iptables-nft-restore v1.8.9 (nf_tables): Failed to initialize nft: Protocol not supported" >&2; exit 1`, "", "Failed to initialize nft: Protocol not supported"},
		{"extension", `echo "Warning: Extension statistic revision 0 not supported, missing kernel module?" >&2; echo "iptables-nft-restore v1.8.9 (nf_tables): line 3: RULE_APPEND failed (No such file or directory): rule in chain KUBE-SVC" >&2; exit 4`, "", "RULE_APPEND failed (No such file or directory)"},
		{"modprobe", `echo "modprobe: FATAL: Module ip_tables not found in directory /lib/modules/6.1.0-57-cloud-amd64" >&2; echo "iptables-restore v1.8.9 (legacy): iptables-restore: unable to initialize table 'filter'" >&2; exit 1`, "", "modprobe: FATAL: Module ip_tables not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeLoaders(t, backend.IptablesNFT, "cat >/dev/null\n"+c.script)
			r := Trial(context.Background(), backend.IptablesNFT, rke2.KubeVersion{})
			if c.failure != "" {
				check.Says(t, "failure", r.Failure, c.failure)
				if r.Unproven != "" {
					t.Errorf("also unproven: %s", r.Unproven)
				}
				return
			}
			if r.Failure != "" {
				t.Fatalf("refused the backend: %s", r.Failure)
			}
			check.Says(t, "unproven", r.Unproven, c.unproven)
		})
	}
}
