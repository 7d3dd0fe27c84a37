package testhost

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnmetFailsUnderCI runs a test that meets an unmet prerequisite, in a
// child test binary: without CI it is skipped, with CI=true it fails.
func TestUnmetFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTHOST_UNMET_CHILD") == "1" {
		Unmet(t, "needs %s", "a tool nobody has")
		return
	}
	for ci, want := range map[string]string{"": "--- SKIP: TestUnmetFailsUnderCI", "true": "--- FAIL: TestUnmetFailsUnderCI"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnmetFailsUnderCI$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "TESTHOST_UNMET_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "needs a tool nobody has") || (ci == "true") != (err != nil) {
			t.Errorf("CI=%q: want %q and the reason; got %v:\n%s", ci, want, err, out)
		}
	}
}
