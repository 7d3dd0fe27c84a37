package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// external are the series the rules and the dashboard read from the
// exporters beside ours, each with where it comes from: they are the
// join keys (pool, boot time), not figures of ours.
var external = map[string]string{
	"kube_node_labels":           "kube-state-metrics",
	"kube_node_status_condition": "kube-state-metrics",
	"node_boot_time_seconds":     "node_exporter",
}

// metricRef finds metric names in PromQL: the prefixes every series the
// rules and panels read carries. Label names (label_node_pool, node) and
// quoted values do not start a match.
var metricRef = regexp.MustCompile(`\b(?:rke2_proxy_backend|kubeproxy|kube|node)_[a-zA-Z0-9_]*[a-zA-Z0-9]`)

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// unknownMetrics lists the names the queries use that known lacks.
func unknownMetrics(queries []string, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range queries {
		for _, name := range metricRef.FindAllString(quoted.ReplaceAllString(q, `""`), -1) {
			if !known[name] && external[name] == "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// pageMetrics adds the metric names of a text exposition to known.
func pageMetrics(known map[string]bool, page []byte) {
	for _, line := range strings.Split(string(page), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			known[line[:i]] = true
		}
	}
}

// ourTextfiles are real textfiles of verify and watch, with every optional
// series present (kube-proxy figures, failures, conflicts, bench, proof).
func ourTextfiles() [][]byte {
	nft := backend.IptablesNFT
	r := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: nft, Synced: true, Duration: time.Second, ProxyMode: "iptables",
		Backends: []verify.BackendState{{Backend: nft, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80},
			{Backend: backend.IptablesLegacy, CNIChains: map[cni.Owner]int{cni.OwnerCalico: 6}, CNIOtherBackend: map[cni.Owner]int{cni.OwnerCalico: 6}}},
		Findings: []verify.Finding{{Kind: verify.KindSyncFailing, Backend: nft, Message: "failing"}},
		KubeProxy: &kubeproxy.Figures{
			Syncs:      []kubeproxy.SyncFigures{{Kind: kubeproxy.SyncFull, IPFamily: "IPv4", Count: 2, Mean: 0.85, P99: f64(1.02)}},
			LastSync:   map[string]float64{"IPv4": 1.79e9},
			LastQueued: map[string]float64{"IPv4": 1.79e9 + 100},
			Failures:   []kubeproxy.FailureCount{{Counter: kubeproxy.FailIptablesRestore, IPFamily: "IPv4", Count: 1}}}}
	fleet := proof.Fleet{Decision: plan.Decision{Backend: nft, ProxyMode: "iptables", IptablesMode: "nft", Source: "auto"},
		Conflicts: []hostconflict.Finding{{ID: "firewalld"}}, LastProof: time.Unix(1, 0), Heartbeat: time.Unix(1, 0), StaleAfter: time.Hour}
	fleet.Cost = benchCost()
	// A census that can tell (no) carries every census series.
	held := &census.Census{Schema: census.Schema, Verdict: census.No, HeldBackBy: []census.Ref{{Where: census.Where{PodUID: "u"}}},
		Namespaces: []census.Namespace{{Where: census.Where{Host: true}}, {Where: census.Where{PodUID: "u"}, Legacy: []census.LegacyTable{{Family: "ipv4", Table: "nat", Rules: 1}}}}}
	return [][]byte{proof.Metrics(r, time.Unix(1, 0)), proof.DriftMetrics(true, 2, &events.Writer{PID: 1, Comm: "nft", Origin: events.Origin{Unit: "a.service"}}), proof.FleetMetrics(fleet),
		proof.CensusMetrics(held, time.Second, time.Unix(1, 0))}
}

// Every rule and every panel query reads only series the tool's textfiles
// or kube-proxy's real /metrics page (the oracle's, iptables and nftables
// modes, in a throwaway network namespace) export.
func TestQueriesReadOnlyExportedMetrics(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	known := map[string]bool{}
	for _, f := range ourTextfiles() {
		pageMetrics(known, f)
	}
	var sources []string
	for _, b := range []backend.Backend{backend.IptablesNFT, backend.NFTables} {
		minor := oracle.NewestWith(b)
		pageMetrics(known, oracle.MetricsPage(t, minor, b, oracle.Options{Services: 3}))
		sources = append(sources, kubeProxyMetricsSource(t, minor))
	}
	queries := dashboardQueries(t)
	for _, g := range readYAML(t, rulesFile)["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			queries = append(queries, r.(map[string]any)["expr"].(string))
		}
	}
	var bad []string
	for _, name := range unknownMetrics(queries, known) {
		// kube-proxy's vectors (per IP family) appear on its page only
		// once observed: a first sync fails nothing and programs no
		// endpoint change with a trigger time. Those must be registered
		// by the kube-proxy the oracle was built from.
		if !registeredBy(name, sources) {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		t.Errorf("queries read series nothing exports: %s", strings.Join(bad, ", "))
	}
	for _, must := range []string{"kubeproxy_sync_proxy_rules_duration_seconds_bucket", "rke2_proxy_backend_decision_info", "rke2_proxy_backend_host_conflict"} {
		if !known[must] {
			t.Errorf("%s is in no real page or textfile: the check above has nothing to check against", must)
		}
	}
	if registeredBy("kubeproxy_sync_proxy_rules_made_up_total", sources) {
		t.Error("a made-up kube-proxy series counts as registered: the source check proves nothing")
	}
	// The check can fail: a made-up series is named.
	if bad := unknownMetrics([]string{`rate(kubeproxy_sync_proxy_rules_made_up_total{x="node_y"}[5m]) * on (node) rke2_proxy_backend_info`}, known); len(bad) != 1 || bad[0] != "kubeproxy_sync_proxy_rules_made_up_total" {
		t.Errorf("a made-up series: %v; want it named, alone", bad)
	}
}

// benchCost is a bench record as facts reads it.
func benchCost() *facts.Cost {
	return &facts.Cost{Report: bench.Report{Services: 1000, MeasuredAt: "2026-12-01T10:00:00Z",
		Results: []bench.Result{{Backend: backend.NFTables, Steps: []bench.Step{{Step: bench.StepFull, WallSeconds: 0.2}}}}}}
}

// kubeProxyMetricsSource is kube-proxy's metrics registration
// (pkg/proxy/metrics/metrics.go) in the k8s.io/kubernetes the oracle of
// minor is built from, as the module cache holds it after the build.
func kubeProxyMetricsSource(t *testing.T, minor string) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join("..", "..", "test", "kubeproxy", "go."+minor+".mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("test/kubeproxy/go.%s.mod requires no k8s.io/kubernetes", minor)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+string(m[1]), "pkg", "proxy", "metrics", "metrics.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("kube-proxy's metrics source of the %s oracle: %v", minor, err)
	}
	return string(src)
}

// registeredBy reports whether a kubeproxy_* series (a histogram's
// _bucket, _sum or _count included) is registered in one of the sources.
func registeredBy(series string, sources []string) bool {
	name, ok := strings.CutPrefix(series, "kubeproxy_")
	if !ok {
		return false
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		name = strings.TrimSuffix(name, suffix)
	}
	decl := regexp.MustCompile(`Subsystem:\s*kubeProxySubsystem,\s*Name:\s*"` + regexp.QuoteMeta(name) + `"`)
	for _, src := range sources {
		if decl.MatchString(src) {
			return true
		}
	}
	return false
}
