package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
)

const (
	dashboardFile      = "grafana/rke2-proxy-backend-fleet.json"
	prometheusRuleFile = "prometheus/rke2-proxy-backend.prometheusrule.yaml"
)

// The committed dashboard and PrometheusRule are what dashboardgen (its own
// module, with grafana-foundation-sdk) generates from its source and the
// rules file: it writes them into a scratch directory, and an edit by hand
// or a rules change without regenerating fails the golden comparison
// (UPDATE_GOLDEN=1 rewrites them after review).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	out := t.TempDir()
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rulesFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, rulesFile), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "run", ".", "-dir", out)
	cmd.Dir = "dashboardgen"
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			_ = cmd.Process.Kill()
		}
	}()
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dashboardgen: %v\n%s", err, msg)
	}
	for _, f := range []string{dashboardFile, prometheusRuleFile} {
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("dashboardgen did not write %s: %v", f, err)
		}
		golden.File(t, f, got)
	}
}

// One source, two forms: the PrometheusRule's groups are the rules file's,
// key for key and rule for rule.
func TestPrometheusRuleHoldsTheRulesFile(t *testing.T) {
	rules := readYAML(t, rulesFile)
	pr := readYAML(t, prometheusRuleFile)
	if pr["apiVersion"] != "monitoring.coreos.com/v1" || pr["kind"] != "PrometheusRule" {
		t.Fatalf("%s is no PrometheusRule: apiVersion %v, kind %v", prometheusRuleFile, pr["apiVersion"], pr["kind"])
	}
	spec, _ := pr["spec"].(map[string]any)
	if !reflect.DeepEqual(spec["groups"], rules["groups"]) {
		t.Fatalf("%s's spec.groups differ from %s's groups: regenerate with `go run .` in dashboardgen", prometheusRuleFile, rulesFile)
	}
	// The comparison can fail: one changed threshold is told apart.
	changed := readYAML(t, rulesFile)
	changed["groups"].([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)["expr"] = "rke2_proxy_backend_verify_ok == 1"
	if reflect.DeepEqual(spec["groups"], changed["groups"]) {
		t.Fatal("a changed rule still compares equal: the test above proves nothing")
	}
	// The Operator's form passes promtool too: its groups as a rules file.
	data, err := yaml.Marshal(map[string]any{"groups": spec["groups"]})
	if err != nil {
		t.Fatal(err)
	}
	promtoolRules(t, data)
}

func readYAML(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// dashboardQueries are every PromQL expression of the dashboard: its
// panels' targets and its query variables.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q has a target without a query", p.Title)
			}
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			// label_values(metric, label) is Grafana's, not PromQL: its
			// metric is what Prometheus is asked for.
			inner, _ := strings.CutPrefix(q, "label_values(")
			metric, _, _ := strings.Cut(inner, ",")
			out = append(out, metric)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d queries in %s", len(out), dashboardFile)
	}
	return out
}

// asPromQL replaces Grafana's variables with values Prometheus would get.
func asPromQL(q string) string {
	return strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", "$pool", ".*", "${datasource}", "").Replace(q)
}

// Every panel query parses: promtool checks them as recording rules.
func TestDashboardQueriesPassPromtool(t *testing.T) {
	promtool(t)
	promtoolRules(t, recordingRules(t, dashboardQueries(t)))
	// The check can fail: a query that does not parse is refused.
	cmd := exec.Command(promtool(t), "check", "rules", "/dev/stdin")
	cmd.Stdin = strings.NewReader(string(recordingRules(t, []string{"sum by (backend (rke2_proxy_backend_info)"})))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("promtool accepted a query that does not parse:\n%s", out)
	}
}

func recordingRules(t *testing.T, queries []string) []byte {
	t.Helper()
	var rules []map[string]string
	for i, q := range queries {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d", i), "expr": asPromQL(q)})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func promtoolRules(t *testing.T, rules []byte) {
	t.Helper()
	f := t.TempDir() + "/rules.yaml"
	if err := os.WriteFile(f, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runPromtool(t, nil, "check", "rules", f); !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check rules:\n%s\n%s", out, rules)
	}
}
