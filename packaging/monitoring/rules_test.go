package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	rulesFile     = "prometheus/rke2-proxy-backend.rules.yaml"
	rulesTestFile = "prometheus/rules_test.yaml"
)

func TestAlertRulesPassPromtoolCheckAndUnitTests(t *testing.T) {
	promtool(t)
	// check rules lints too (e.g. a rule without a summary is fine, a bad
	// expression or duplicate rule is not).
	if out := runPromtool(t, nil, "check", "rules", rulesFile); !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool check rules %s:\n%s", rulesFile, out)
	}
	runPromtool(t, nil, "test", "rules", rulesTestFile)
}

// TestRuleUnitTestsCanFail breaks one rule's threshold at a time in a copy:
// the unit tests must notice, or they prove nothing.
func TestRuleUnitTestsCanFail(t *testing.T) {
	p := promtool(t)
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to string }{
		{"rke2_proxy_backend_verify_ok == 0", "rke2_proxy_backend_verify_ok == 1"},
		{"rke2_proxy_backend_k8s138_would_move == 1", "rke2_proxy_backend_k8s138_would_move == 0"},
		{"rke2_proxy_backend_kube_proxy_sync_failing == 1", "rke2_proxy_backend_kube_proxy_sync_failing == 0"},
		{"> rke2_proxy_backend_node_condition_stale_after_seconds", "> 2 * rke2_proxy_backend_node_condition_stale_after_seconds"},
		{`unless on (node) rke2_proxy_backend_build_info`, `and on (node) rke2_proxy_backend_build_info`},
	} {
		broken := strings.Replace(string(rules), c.from, c.to, 1)
		if broken == string(rules) {
			t.Fatalf("the expression %q changed: update this test", c.from)
		}
		rulesFailPromtool(t, p, broken, tests)
	}
}

// rulesFailPromtool fails t unless promtool's unit tests reject broken.
func rulesFailPromtool(t *testing.T, p, broken string, tests []byte) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string][]byte{filepath.Base(rulesFile): []byte(broken), filepath.Base(rulesTestFile): tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(p, "test", "rules", filepath.Base(rulesTestFile))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("promtool test rules passed with a broken rule:\n%s", out)
	}
}
