package nstest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const (
	envTest   = "NSTEST_NETNS_TEST"   // the test the child runs
	envParent = "NSTEST_PARENT_NETNS" // the parent's netns, which the child must not be in
)

// InNetns runs the calling test in a fresh network namespace: the first
// call re-executes the test binary under `unshare -n` for just this test
// and returns false (the caller returns); inside the child it returns true
// once it has checked that the namespace is really a new one, so a test
// never touches the host's rules. It skips when not root or without
// unshare, and fails then under CI=true (testhost.Unmet).
//
//	if !nstest.InNetns(t) { return }
func InNetns(t testing.TB) bool {
	t.Helper()
	self, _ := os.Readlink("/proc/self/ns/net")
	if os.Getenv(envTest) == t.Name() {
		if parent := os.Getenv(envParent); parent == "" || parent == self {
			t.Fatalf("refusing to touch netfilter: not in a fresh network namespace (%s)", self)
		}
		return true
	}
	if os.Geteuid() != 0 {
		testhost.Unmet(t, "needs root to create a network namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		testhost.Unmet(t, "needs unshare (util-linux) to create a network namespace")
	}
	args := []string{"-n", os.Args[0], "-test.run=" + runPattern(t.Name()), "-test.count=1", "-test.v"}
	_, bench := t.(*testing.B)
	if bench {
		args = []string{"-n", os.Args[0], "-test.run=^$", "-test.bench=" + runPattern(t.Name()), "-test.benchmem", "-test.v"}
		if f := flag.Lookup("test.benchtime"); f != nil {
			args = append(args, "-test.benchtime="+f.Value.String())
		}
	}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), envTest+"="+t.Name(), envParent+"="+self)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a network namespace: %v\n%s", err, out)
	}
	if bench {
		// The child's benchmark lines are the results; this run has none.
		fmt.Print(string(out))
		t.Skip("ran in a network namespace; results above")
	}
	if !strings.Contains(string(out), "PASS") || strings.Contains(string(out), "no tests to run") {
		t.Fatalf("the test did not run in the network namespace:\n%s", out)
	}
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		testhost.Unmet(t, "skipped in the network namespace:\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("in a network namespace:\n%s", out)
	}
	return false
}

// runPattern anchors each level of a (sub)test name for -test.run.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Tool returns the path of a command-line tool, or skips the test (fails
// it under CI=true: testhost.Unmet).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testhost.Unmet(t, "needs %s: %v", name, err)
	}
	return p
}

// Sh runs a shell script (in the test's namespace) and fails the test
// with its output when it fails.
func Sh(t testing.TB, script string) string {
	t.Helper()
	out, err := exec.Command("sh", "-ec", script).CombinedOutput()
	if err != nil {
		t.Fatalf("sh -ec %q: %v\n%s", script, err, out)
	}
	return string(out)
}

// Setup is the usual start of a netns test: in the parent it runs the
// test in a fresh network namespace and returns false (the caller returns);
// in the namespace it checks tools are installed, runs script with sh
// (none when empty: the test loads what it needs itself), and returns true.
func Setup(t testing.TB, script string, tools ...string) bool {
	t.Helper()
	if !InNetns(t) {
		return false
	}
	for _, tool := range tools {
		Tool(t, tool)
	}
	if script != "" {
		Sh(t, script)
	}
	return true
}
