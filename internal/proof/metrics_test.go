package proof

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// skeleton is kube-proxy's rules for b with services Services, layout of
// an unknown version.
func skeleton(t *testing.T, b backend.Backend, services int) *rules.Ruleset {
	t.Helper()
	rs, err := expected.Render(expected.Options{Backend: b, Kubernetes: rke2.KubeVersion{}, Services: services})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// fakeOf is a Fake holding rulesets, read with verify's own read options
// (the shapes production reads).
func fakeOf(rulesets ...*rules.Ruleset) *netfilter.Fake {
	f := netfilter.NewFake(rulesets...)
	f.ReadOptions = verify.ReadOptions
	return f
}

// judged is verify's result for opts.
func judged(t *testing.T, opts verify.Options) *verify.Result {
	t.Helper()
	res, err := verify.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A run's metrics, status and report: what it found stranded is counted
// in the textfile, the status says it failed, the report names the fix; a
// textfile directory that does not exist is a note, not an error.
func TestOutputs(t *testing.T) {
	fake := fakeOf(skeleton(t, backend.IptablesNFT, 0), skeleton(t, backend.IptablesLegacy, 3))
	res := judged(t, verify.Options{Expect: backend.IptablesNFT, Reader: fake})
	m := string(Metrics(res, time.Unix(1700000000, 0)))
	for _, want := range []string{
		`rke2_proxy_backend_info{backend="iptables-nft"} 1`,
		"rke2_proxy_backend_verify_ok 0",
		`rke2_proxy_backend_stranded_rules{backend="iptables-nft"} 0`,
		"rke2_proxy_backend_verify_last_run_timestamp_seconds 1700000000",
		"# TYPE rke2_proxy_backend_verify_duration_seconds gauge",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	// 3 services: 3 KUBE-SVC + 6 KUBE-SEP chains with 3+6+6 rules, plus the skeleton's.
	if !strings.Contains(m, `rke2_proxy_backend_stranded_rules{backend="iptables-legacy"} `) ||
		strings.Contains(m, `rke2_proxy_backend_stranded_rules{backend="iptables-legacy"} 0`) {
		t.Errorf("legacy stranded rules not counted:\n%s", m)
	}

	dir := t.TempDir()
	root := hostfs.New(dir)
	if err := WriteStatus(root, res); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, hostfs.StatusFile)); err != nil || !strings.Contains(string(b), `"ok": false`) {
		t.Errorf("status.json: %v\n%s", err, b)
	}
	note, err := WriteMetrics(root, "/var/lib/node-exporter", res, time.Now())
	if err != nil || !strings.Contains(note, "does not exist") {
		t.Errorf("absent textfile dir: note %q, err %v", note, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "var/lib/node-exporter"), 0o755); err != nil {
		t.Fatal(err)
	}
	if note, err := WriteMetrics(root, "/var/lib/node-exporter", res, time.Now()); err != nil || note != "" {
		t.Errorf("textfile dir present: note %q, err %v", note, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "var/lib/node-exporter", MetricsFile)); err != nil {
		t.Error(err)
	}
	var text strings.Builder
	if err := verify.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "fix: "+verify.CleanupCommand(backend.IptablesLegacy)) {
		t.Errorf("report lacks the cleanup command:\n%s", text.String())
	}
}

// The status and the textfile say the proxy mode beside the backend: ipvs
// when the plan keeps it, the backend's own mode otherwise; the existing
// rke2_proxy_backend_info series stays as it was, and promtool accepts
// the textfile.
func TestModeBesideBackend(t *testing.T) {
	fake := fakeOf(skeleton(t, backend.IptablesNFT, 0))
	for _, c := range []struct {
		opts verify.Options
		want string
	}{
		{verify.Options{Expect: backend.IptablesNFT, Reader: fake}, "iptables"},
		{verify.Options{Expect: backend.IptablesNFT, Reader: fake, ProxyMode: verify.ProxyModeIPVS}, "ipvs"},
		{verify.Options{Expect: backend.NFTables, Reader: fake}, "nftables"},
	} {
		res := judged(t, c.opts)
		m := Metrics(res, time.Unix(1700000000, 0))
		for _, want := range []string{
			`rke2_proxy_backend_info{backend="` + string(c.opts.Expect) + `"} 1`,
			`rke2_proxy_backend_proxy_mode_info{backend="` + string(c.opts.Expect) + `",mode="` + c.want + `"} 1`,
		} {
			if !bytes.Contains(m, []byte(want)) {
				t.Errorf("metrics lack %q:\n%s", want, m)
			}
		}
		check.PromtoolMetrics(t, m)
		b, err := JSON(res) // what WriteStatus stores
		if err != nil || !strings.Contains(string(b), `"mode": "`+c.want+`"`) || !strings.Contains(string(b), `"expect": "`+string(c.opts.Expect)+`"`) {
			t.Errorf("status.json lacks mode %q beside the backend: %v\n%s", c.want, err, b)
		}
	}
}

// The textfile counts, per backend and component, the CNI's chains and
// those in a backend other than the one matching kube-proxy's.
func TestCNISeries(t *testing.T) {
	r := &verify.Result{Expect: backend.IptablesNFT, Backends: []verify.BackendState{
		{Backend: backend.IptablesNFT, Expected: true, CNIChains: map[cni.Owner]int{cni.OwnerPortmap: 3}},
		{Backend: backend.IptablesLegacy, CNIChains: map[cni.Owner]int{cni.OwnerCalico: 6, cni.OwnerFlannel: 2}, CNIOtherBackend: map[cni.Owner]int{cni.OwnerCalico: 6}}}}
	m := string(Metrics(r, time.Unix(0, 0)))
	for _, want := range []string{
		`rke2_proxy_backend_cni_rules{backend="iptables-nft",cni="portmap"} 3` + "\n",
		`rke2_proxy_backend_cni_rules{backend="iptables-legacy",cni="calico"} 6` + "\n" + `rke2_proxy_backend_cni_rules{backend="iptables-legacy",cni="flannel"} 2` + "\n",
		`rke2_proxy_backend_cni_other_backend_chains{backend="iptables-legacy",cni="calico"} 6` + "\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// syncPage is kube-proxy's IPv4 sync histogram with buckets (le -> the
// cumulative count, in pairs) and count 100.
func syncPage(buckets ...string) []byte {
	page := ""
	for i := 0; i+1 < len(buckets); i += 2 {
		page += `kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",le="` + buckets[i] + `"} ` + buckets[i+1] + "\n"
	}
	return []byte(page + `kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} 12` + "\n" +
		`kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 100` + "\n")
}

// A figure kube-proxy's buckets cannot give is left out, and status.json
// and the textfile of that run are still written (issue 19 item 7: a NaN
// p99 made JSON encoding fail, so verify exited 1 and left the previous
// status in place); the mean, which could be computed, stays.
func TestKubeProxyFiguresThatCannotBeComputed(t *testing.T) {
	for name, page := range map[string][]byte{
		"a bucket le=NaN":                      syncPage("0.1", "50", "NaN", "90", "+Inf", "100"),
		"bounds whose interpolation overflows": syncPage("-1e308", "1", "1.7e308", "100", "+Inf", "100"),
		"counts falling as the bound rises":    syncPage("0.1", "90", "1", "20", "+Inf", "100"),
	} {
		fig, _, err := kubeproxy.ParseFigures(page)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res := &verify.Result{Expect: backend.NFTables, KubeProxy: fig}
		if _, err := JSON(res); err != nil {
			t.Fatalf("%s: status.json cannot be written: %v", name, err)
		}
		m := string(Metrics(res, time.Unix(0, 0)))
		if strings.Contains(m, `stat="p99"`) || strings.Contains(m, "NaN") || strings.Contains(m, "Inf") {
			t.Errorf("%s: metrics carry a figure that could not be computed:\n%s", name, m)
		}
		if !strings.Contains(m, `stat="mean"} 0.12`) {
			t.Errorf("%s: metrics lost the mean, which could be computed:\n%s", name, m)
		}
	}
}

// 50,000 distinct table labels (a page well under the 4 MiB cap) must not
// become 50,000 entries in status.json and series in the textfile (issue
// 19 item 8: a 1.07 MB status.json that check then refused forever).
func TestKubeProxyFiguresBounded(t *testing.T) {
	page := bytes.NewBuffer(syncPage("0.1", "100", "+Inf", "100"))
	for i := range 50000 {
		fmt.Fprintf(page, "kubeproxy_sync_proxy_rules_iptables_total{ip_family=\"IPv4\",table=\"t%d\"} 1\n", i)
	}
	fig, _, err := kubeproxy.ParseFigures(page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	res := &verify.Result{Expect: backend.NFTables, KubeProxy: fig}
	status, err := JSON(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) > 16<<10 {
		t.Errorf("status.json is %d bytes; a handful of figures should be a few KiB", len(status))
	}
	series := strings.Count(string(Metrics(res, time.Unix(0, 0))), "rke2_proxy_backend_kube_proxy_iptables_rules{")
	if series == 0 || series > 10 {
		t.Errorf("%d iptables rule series in the textfile, want between 1 and 10", series)
	}
}

// The textfile copies the counters and the queued time, and says 1 for a
// failing kube-proxy; a counter that was not a number leaves the verdict
// series out rather than write 0.
func TestSyncFailureMetrics(t *testing.T) {
	kp := &kubeproxy.Figures{LastQueued: map[string]float64{"IPv4": 1.5e9},
		Failures: []kubeproxy.FailureCount{{Counter: kubeproxy.FailNFTablesSync, IPFamily: "IPv4", Count: 5}}}
	r := &verify.Result{Expect: backend.NFTables, KubeProxy: kp, Findings: []verify.Finding{{Kind: verify.KindSyncFailing, Backend: backend.NFTables}}}
	m := string(Metrics(r, time.Unix(1700000000, 0)))
	for _, want := range []string{
		`rke2_proxy_backend_kube_proxy_sync_failures{backend="nftables",counter="nftables_sync",ip_family="IPv4"} 5` + "\n",
		`rke2_proxy_backend_kube_proxy_last_queued_timestamp_seconds{backend="nftables",ip_family="IPv4"} 1.5e+09` + "\n",
		`rke2_proxy_backend_kube_proxy_sync_failing{backend="nftables"} 1` + "\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	r = &verify.Result{Expect: backend.NFTables, KubeProxy: &kubeproxy.Figures{}}
	if m := string(Metrics(r, time.Unix(1700000000, 0))); !strings.Contains(m, `rke2_proxy_backend_kube_proxy_sync_failing{backend="nftables"} 0`+"\n") {
		t.Errorf("a clean read: metrics lack sync_failing 0:\n%s", m)
	}
	r.KubeProxy.Unreadable = map[string][]string{"IPv4": {"kubeproxy_sync_proxy_rules_nftables_sync_failures_total"}}
	if m := string(Metrics(r, time.Unix(1700000000, 0))); strings.Contains(m, "rke2_proxy_backend_kube_proxy_sync_failing{") {
		t.Errorf("an unreadable counter: sync_failing written anyway:\n%s", m)
	}
}

// The metric never reads 0 (fine) when verify could not tell.
func TestSyncFailingMetric(t *testing.T) {
	for _, c := range []struct {
		name string
		r    verify.Result
		v    int
		ok   bool
	}{
		{"not read", verify.Result{}, 0, false},
		{"read, fine", verify.Result{KubeProxy: &kubeproxy.Figures{}}, 0, true},
		{"a counter not a number", verify.Result{KubeProxy: &kubeproxy.Figures{Unreadable: map[string][]string{"IPv4": {"x"}}}}, 0, false},
		{"failing", verify.Result{KubeProxy: &kubeproxy.Figures{}, Findings: []verify.Finding{{Kind: verify.KindSyncFailing}}}, 1, true},
		{"stale, other signal unreadable", verify.Result{KubeProxy: &kubeproxy.Figures{Unreadable: map[string][]string{"IPv6": {"x"}}},
			Findings: []verify.Finding{{Kind: verify.KindSyncStale}}}, 1, true},
	} {
		if v, ok := syncFailing(&c.r); v != c.v || ok != c.ok {
			t.Errorf("%s: syncFailing = %d, %v, want %d, %v", c.name, v, ok, c.v, c.ok)
		}
	}
}

// Whatever page kubeproxy accepts, verify's status.json holds its figures
// and verify's own metrics of them pass the exposition format.
func FuzzKubeProxyFiguresOutput(f *testing.F) {
	for _, file := range []string{"kube-proxy-v1.37-iptables-metrics.prom", "kube-proxy-v1.37-nftables-metrics.prom"} {
		page, err := os.ReadFile("../kubeproxy/testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(page)
	}
	f.Add([]byte("kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"+Inf\"} 3\n"))
	f.Add([]byte("kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"} 1.7e+09\n" +
		"kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"} 5\n" +
		"kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family=\"IPv6\"} NaN\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		fig, _, err := kubeproxy.ParseFigures(page)
		if err != nil {
			return
		}
		if _, err := JSON(&verify.Result{Expect: backend.NFTables, KubeProxy: fig}); err != nil {
			t.Fatalf("status.json of an accepted page: %v", err)
		}
		m := Metrics(&verify.Result{Expect: backend.NFTables, KubeProxy: fig}, time.Unix(0, 0))
		if _, err := kubeproxy.ParseExposition(m, func(string) bool { return true }); err != nil {
			t.Fatalf("our metrics of an accepted page do not parse: %v\n%s", err, m)
		}
	})
}

// The textfile watch writes passes Prometheus's linter, steady and drifting.
func TestDriftMetricsPassPromtool(t *testing.T) {
	check.PromtoolMetrics(t, DriftMetrics(false, 0, nil))
	check.PromtoolMetrics(t, DriftMetrics(true, 3, nil))
	check.PromtoolMetrics(t, DriftMetrics(true, 3, &events.Writer{PID: 1, Comm: "nft", Origin: events.Origin{Unit: "a.service"}}))
}

// While drifting, the drift textfile names the last writer in one series,
// comm and unit or pod only; an odd comm becomes "unknown"; after the
// drift the series goes.
func TestDriftMetricsNameTheWriter(t *testing.T) {
	uid := "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"
	kp := &events.Writer{PID: 99, Comm: "kube-proxy", Origin: events.Origin{PodUID: uid, Container: "4f1e"}}
	check.Says(t, "drift metrics", string(DriftMetrics(true, 1, kp)), `rke2_proxy_backend_drift_writer_info{comm="kube-proxy",unit="",pod_uid="`+uid+`"} 1`+"\n")
	odd := &events.Writer{PID: 7, Comm: "a\"b", Origin: events.Origin{Unit: "x.service"}}
	check.Says(t, "drift metrics", string(DriftMetrics(true, 1, odd)), `rke2_proxy_backend_drift_writer_info{comm="unknown",unit="x.service",pod_uid=""} 1`+"\n")
	if m := string(DriftMetrics(false, 2, kp)); strings.Contains(m, "drift_writer_info") {
		t.Errorf("writer series without drift:\n%s", m)
	}
}

func TestWriteDriftMetrics(t *testing.T) {
	root := hostfs.New(t.TempDir())
	dir := "/var/lib/prometheus/node-exporter"
	// No textfile directory: node_exporter is not set up, nothing written.
	if err := WriteDriftMetrics(root, dir, true, 1, nil); err != nil {
		t.Fatal(err)
	}
	if root.Exists(filepath.Join(dir, DriftMetricsFile)) {
		t.Fatal("wrote metrics into a directory that did not exist")
	}
	if err := os.MkdirAll(root.Path(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteDriftMetrics(root, dir, true, 1, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(root.Path(filepath.Join(dir, DriftMetricsFile)))
	if err != nil {
		t.Fatal(err)
	}
	check.Says(t, "metrics", string(got), "rke2_proxy_backend_drift 1\n", "rke2_proxy_backend_drift_transitions_total 1\n")
}
