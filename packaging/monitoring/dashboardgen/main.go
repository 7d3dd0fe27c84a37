// Command dashboardgen writes the monitoring files operators install that
// are generated: the Grafana dashboard (built with grafana-foundation-sdk)
// and the PrometheusRule form of the plain rules file. A module of its own,
// run only by the tests and by hand: the product pays nothing for the SDK.
//
//	go run . [-dir ..]
//
// The monitoring tests run it into a scratch directory and compare what it
// wrote with the committed files through internal/testkit/golden, so the
// committed files are what it generates (UPDATE_GOLDEN=1 rewrites them).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// The generated files, relative to packaging/monitoring.
const (
	DashboardFile      = "grafana/rke2-proxy-backend-fleet.json"
	RulesFile          = "prometheus/rke2-proxy-backend.rules.yaml"
	PrometheusRuleFile = "prometheus/rke2-proxy-backend.prometheusrule.yaml"
)

func main() {
	dir := flag.String("dir", "..", "packaging/monitoring")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "dashboardgen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	files, err := generate(dir)
	if err != nil {
		return err
	}
	for _, name := range []string{DashboardFile, PrometheusRuleFile} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func generate(dir string) (map[string][]byte, error) {
	d, err := Dashboard()
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	dash, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	rules, err := os.ReadFile(filepath.Join(dir, RulesFile))
	if err != nil {
		return nil, err
	}
	pr, err := PrometheusRule(rules)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RulesFile, err)
	}
	return map[string][]byte{DashboardFile: append(dash, '\n'), PrometheusRuleFile: pr}, nil
}
