// Package test holds what checks the test runner itself: the shell tests
// beside it run under `make e2e`, which this package's test drives.
package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// make e2e numbers its scripts, says every HEARTBEAT_SECONDS that a silent
// one still runs, and how each ended after how long; a failing script
// stops the run with its status named. Real make, real bash, the
// Makefile's own recipe on two scripts of the test's.
func TestE2EProgress(t *testing.T) {
	needMake(t)
	dir := t.TempDir()
	slow, quick, failing := filepath.Join(dir, "slow.sh"), filepath.Join(dir, "quick.sh"), filepath.Join(dir, "failing.sh")
	write(t, slow, "sleep 2.5\n")
	write(t, quick, "echo quick says hello\n")
	write(t, failing, "exit 7\n")
	// A Makefile that does not take the list would run every real e2e
	// script: refuse before running anything.
	if dry, err := exec.Command("make", "-n", "-C", "../..", "e2e", "E2E_SCRIPTS="+slow).CombinedOutput(); err != nil || !strings.Contains(string(dry), slow) {
		t.Fatalf("make e2e does not take its scripts from E2E_SCRIPTS (%v):\n%s", err, dry)
	}

	out, err := makeE2E(t, slow, quick)
	if err != nil {
		t.Fatalf("make e2e: %v\n%s", err, out)
	}
	// The beats' times depend on this machine's load: each is a whole
	// second, at least 1, and they grow.
	beats := regexp.MustCompile(`(?m)^== e2e \[1/2\] `+regexp.QuoteMeta(slow)+`: still running, (\d+)s$`).FindAllStringSubmatch(out, -1)
	if len(beats) == 0 {
		t.Errorf("no beat while a script ran 2.5s at HEARTBEAT_SECONDS=1:\n%s", out)
	}
	last := 0
	for i, b := range beats {
		n, _ := strconv.Atoi(b[1])
		if n <= last {
			t.Errorf("beat %d says %ds after %ds:\n%s", i+1, n, last, out)
		}
		last = n
	}
	for _, re := range []string{
		`(?m)^== e2e \[1/2\] ` + regexp.QuoteMeta(slow) + `\n== e2e \[1/2\] ` + regexp.QuoteMeta(slow) + `: still running`,
		`(?m)^== e2e \[1/2\] ` + regexp.QuoteMeta(slow) + `: finished \(exit 0\) in [2-9]s$`,
		`(?m)^== e2e \[2/2\] ` + regexp.QuoteMeta(quick) + `\nquick says hello\n== e2e \[2/2\] ` + regexp.QuoteMeta(quick) + `: finished \(exit 0\) in \d+s$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no match for %s in:\n%s", re, out)
		}
	}

	out, err = makeE2E(t, failing, quick)
	if err == nil {
		t.Fatalf("make e2e passed with a failing script:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^== e2e \[1/2\] `+regexp.QuoteMeta(failing)+`: FAILED \(exit 7\) after \d+s$`).MatchString(out) || strings.Contains(out, "[2/2]") {
		t.Errorf("a failing script must be named with its status and stop the run:\n%s", out)
	}
}

// make oracle streams the builds' progress: without -v, go test holds a
// passing test's output until it ends, which for a cold build is many
// silent minutes.
func TestOracleStreamsProgress(t *testing.T) {
	needMake(t)
	out, err := exec.Command("make", "-s", "-n", "-C", "../..", "oracle").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n oracle: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`go test .* -v .*TestBinaries`).Match(out) {
		t.Errorf("make oracle does not run go test -v:\n%s", out)
	}
}

func makeE2E(t *testing.T, scripts ...string) (string, error) {
	t.Helper()
	needMake(t)
	cmd := exec.Command("make", "-s", "-C", "../..", "e2e", "E2E_SCRIPTS="+strings.Join(scripts, " "), "HEARTBEAT_SECONDS=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

func needMake(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		testhost.Unmet(t, "needs make (Debian package make)")
	}
}
