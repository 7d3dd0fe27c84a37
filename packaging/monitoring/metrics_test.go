package monitoring

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// promtool finds Debian's promtool (package prometheus). Outside CI a
// developer without it gets a skip; under CI (which installs it) its
// absence fails, as every unmet prerequisite does.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		testhost.Unmet(t, "promtool not installed (Debian package prometheus)")
	}
	return p
}

// run pipes stdin through promtool with args and fails on any complaint:
// `check metrics` exits 0 for lint warnings on some versions, so its output
// counts too.
func runPromtool(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestMetricsPassPromtoolCheckMetrics(t *testing.T) {
	nft := backend.IptablesNFT
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	for name, r := range map[string]*verify.Result{
		"ok": {OK: true, Expect: nft, Synced: true, Duration: 1500 * time.Millisecond,
			Backends: []verify.BackendState{{Backend: nft, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80}}},
		"failing": {Expect: nft, Duration: 5 * time.Minute,
			Backends: []verify.BackendState{{Backend: nft, Expected: true}},
			Findings: []verify.Finding{{Kind: verify.KindMissingChain, Backend: nft, Message: "missing"}}},
		"stranded": {Expect: nft, Synced: true, Duration: 2 * time.Second,
			Backends: []verify.BackendState{
				{Backend: nft, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80},
				{Backend: backend.IptablesLegacy, KubeProxyChains: 4, KubeProxyRules: 12}},
			Findings: []verify.Finding{{Kind: verify.KindStranded, Backend: backend.IptablesLegacy, Message: "stranded"}}},
		"cni in another backend": {Expect: nft, Synced: true, Duration: 2 * time.Second,
			Backends: []verify.BackendState{
				{Backend: nft, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80,
					CNIChains: map[cni.Owner]int{cni.OwnerPortmap: 3}},
				{Backend: backend.IptablesLegacy, CNIChains: map[cni.Owner]int{cni.OwnerCalico: 6, cni.OwnerFlannel: 2},
					CNIOtherBackend: map[cni.Owner]int{cni.OwnerCalico: 6, cni.OwnerFlannel: 2}}},
			Findings: []verify.Finding{{Kind: verify.KindCNIOtherBackend, Backend: backend.IptablesLegacy, Message: "calico"}}},
		"kube-proxy figures": {OK: true, Expect: nft, Synced: true, Duration: time.Second, ProxyMode: "iptables",
			Backends: []verify.BackendState{{Backend: nft, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80}},
			KubeProxy: &kubeproxy.Figures{
				Syncs: []kubeproxy.SyncFigures{
					{Kind: kubeproxy.SyncAll, IPFamily: "IPv4", Count: 12, Mean: 0.3, P99: f64(0.9)},
					{Kind: kubeproxy.SyncFull, IPFamily: "IPv4", Count: 2, Mean: 0.85, P99: f64(1.02)},
					{Kind: kubeproxy.SyncPartial, IPFamily: "IPv6", Count: 10, Mean: 0.2, P99: f64(0.25)}},
				LastSync:        map[string]float64{"IPv4": 1.7960612506780221e+09, "IPv6": 1.7960612507140477e+09},
				ServiceChanges:  2000,
				EndpointChanges: 1000,
				IptablesRules:   map[string]float64{"IPv4/nat": 12001, "IPv4/filter": 22, "IPv6/nat": 9001}}},
		"kube-proxy sync failing": {Expect: backend.NFTables, Synced: true, Duration: 36 * time.Second, ProxyMode: "nftables",
			Backends: []verify.BackendState{{Backend: backend.NFTables, Expected: true, Complete: true, KubeProxyChains: 20, KubeProxyRules: 80}},
			Findings: []verify.Finding{{Kind: verify.KindSyncFailing, Backend: backend.NFTables, Message: "failing"}},
			KubeProxy: &kubeproxy.Figures{
				LastSync:   map[string]float64{"IPv4": 1.7960612506780221e+09},
				LastQueued: map[string]float64{"IPv4": 1.796061350714389e+09, "IPv6": 1.7960612507143998e+09},
				Failures: []kubeproxy.FailureCount{{Counter: kubeproxy.FailNFTablesCleanup, IPFamily: "IPv4", Count: 1},
					{Counter: kubeproxy.FailNFTablesSync, IPFamily: "IPv4", Count: 5}}}},
	} {
		t.Run(name, func(t *testing.T) {
			m := proof.Metrics(r, now)
			if out := strings.TrimSpace(runPromtool(t, m, "check", "metrics")); out != "" {
				t.Errorf("promtool check metrics complains:\n%s\nmetrics:\n%s", out, m)
			}
		})
	}
}

func f64(v float64) *float64 { return &v }

// Both textfiles say which version wrote them (issue 18: after a package
// upgrade watch may still run the old binary), each passes promtool, and
// together with watch's fleet textfile they hold no series twice: node_exporter merges every file in
// its directory and refuses a series two files both export, or one
// metric with two HELP texts.
func TestBuildInfoInBothTextfiles(t *testing.T) {
	r := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: backend.IptablesNFT}
	fleet := proof.Fleet{Decision: plan.Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Source: "auto"},
		Conflicts: []hostconflict.Finding{{ID: "firewalld"}}, LastProof: time.Unix(1, 0)}
	files := map[string][]byte{"verify": proof.Metrics(r, time.Unix(1, 0)), "watch": proof.DriftMetrics(true, 1, &events.Writer{PID: 1, Comm: "nft", Origin: events.Origin{Unit: "a.service"}}), "fleet": proof.FleetMetrics(fleet)}
	series := map[string]string{}
	help := map[string]string{}
	for writer, text := range files {
		if out := strings.TrimSpace(runPromtool(t, text, "check", "metrics")); out != "" {
			t.Errorf("promtool check metrics complains about %s's textfile:\n%s", writer, out)
		}
		want := `rke2_proxy_backend_build_info{version="` + version.Version + `",writer="` + writer + `"} 1`
		if writer != "fleet" && !strings.Contains(string(text), want+"\n") {
			t.Errorf("%s's textfile lacks %s:\n%s", writer, want, text)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
			if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
				name, text, _ := strings.Cut(rest, " ")
				if h, seen := help[name]; seen && h != text {
					t.Errorf("%s has two HELP texts: %q and %q", name, h, text)
				}
				help[name] = text
				continue
			}
			if strings.HasPrefix(line, "#") {
				continue
			}
			key, _, _ := strings.Cut(line, " ")
			if other, dup := series[key]; dup {
				t.Errorf("series %s is in both %s's and %s's textfile", key, other, writer)
			}
			series[key] = writer
		}
	}
}

// TestPromtoolCheckMetricsCatchesLintProblems keeps the test above honest:
// a lint problem (here a counter without _total) must fail runPromtool.
func TestPromtoolCheckMetricsCatchesLintProblems(t *testing.T) {
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader("# HELP foo x\n# TYPE foo counter\nfoo 1\n")
	out, err := cmd.CombinedOutput()
	if err == nil && strings.TrimSpace(string(out)) == "" {
		t.Fatal("promtool check metrics accepted a counter without _total: the metrics test cannot fail")
	}
}
