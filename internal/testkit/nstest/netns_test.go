package nstest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A test that skips inside its namespace skips outside it too, and fails
// under CI=true: what the namespace lacked is a prerequisite like any
// other. The test runs in a child test binary, CI set or not.
func TestSkipInNetnsFailsUnderCI(t *testing.T) {
	if os.Getenv("NSTEST_SKIP_CHILD") == "1" {
		if !InNetns(t) {
			return
		}
		t.Skip("the namespace lacks a tool")
	}
	if os.Geteuid() != 0 {
		testhost.Unmet(t, "needs root to create a network namespace")
	}
	for ci, want := range map[string]string{"": "--- SKIP: TestSkipInNetnsFailsUnderCI", "true": "--- FAIL: TestSkipInNetnsFailsUnderCI"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipInNetnsFailsUnderCI$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "NSTEST_SKIP_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "skipped in the network namespace") || (ci == "true") != (err != nil) {
			t.Errorf("CI=%q: want %q and the reason; got %v:\n%s", ci, want, err, out)
		}
	}
}
