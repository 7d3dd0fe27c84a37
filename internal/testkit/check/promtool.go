package check

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// PromtoolMetrics fails t unless Prometheus's own linter, `promtool check
// metrics`, accepts text without a word: the exposition node_exporter's
// textfile collector and Prometheus read. Without promtool it is an unmet
// prerequisite (a failure under CI, which installs Debian's prometheus
// package).
func PromtoolMetrics(t testing.TB, text []byte) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testhost.Unmet(t, "promtool not installed (CI installs Debian's prometheus package): %v", err)
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, out, text)
	}
}
