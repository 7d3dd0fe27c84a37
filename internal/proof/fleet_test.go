package proof

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// fleetHost is a Debian 12 node on iptables-nft after a one-boot kernel
// command line override, with firewalld enabled and a bench record.
func fleetHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := testhost.New(t).Debian12().
		File("/usr/lib/systemd/system/firewalld.service", "[Unit]\n").
		Symlink("/etc/systemd/system/multi-user.target.wants/firewalld.service", "/usr/lib/systemd/system/firewalld.service").
		Mkdir(hostfs.TextfileDir)
	d := plan.Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Source: "cmdline"}
	a := plan.Applied{Backend: d.Backend, ProxyMode: d.ProxyMode, DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: plan.ByApply}
	if _, err := plan.Write(h.Root(), plan.Plan{Applied: a, Decision: d}); err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Encode(bench.Report{Services: 1000, Kernel: "6.1.0-28-amd64", MeasuredAt: "2026-12-01T10:00:00Z",
		Results: []bench.Result{{Backend: backend.IptablesNFT, Steps: []bench.Step{
			{Step: bench.StepFull, WallSeconds: 0.5, UserSeconds: 0.25, SysSeconds: 0.125},
			{Step: bench.StepPartial, WallSeconds: 0.0125, UserSeconds: 0.001, SysSeconds: 0.002}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return h.File(hostfs.BenchFile, string(rep))
}

func TestFleetMetricsFromTheHost(t *testing.T) {
	h := fleetHost(t)
	proof := time.Unix(1796061250, 0)
	if err := WriteFleetMetrics(h.Root(), hostfs.TextfileDir, func() Fleet { return Of(h.Root(), nil, "", time.Now()).Fleet(distro.RKE2, proof) }); err != nil {
		t.Fatal(err)
	}
	got, err := h.Root().ReadFile(path.Join(hostfs.TextfileDir, FleetMetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`rke2_proxy_backend_decision_info{backend="iptables-nft",iptables_mode="nft",proxy_mode="iptables",source="cmdline"} 1`,
		"rke2_proxy_backend_plan_applied 1",
		"rke2_proxy_backend_host_conflicts 1",
		`rke2_proxy_backend_host_conflict{id="firewalld"} 1`,
		"rke2_proxy_backend_bench_services 1000",
		`rke2_proxy_backend_bench_wall_seconds{backend="iptables-nft",step="full"} 0.5`,
		`rke2_proxy_backend_bench_cpu_seconds{backend="iptables-nft",step="partial"} 0.003`,
		"rke2_proxy_backend_bench_timestamp_seconds 1796119200",
		"rke2_proxy_backend_last_proof_timestamp_seconds 1796061250",
	} {
		if !strings.Contains(string(got), want+"\n") {
			t.Errorf("fleet metrics lack %s:\n%s", want, got)
		}
	}
	if !strings.Contains(string(got), "rke2_proxy_backend_bench_stale ") {
		t.Errorf("no bench_stale gauge:\n%s", got)
	}
	check.PromtoolMetrics(t, got)
}

// Without a plan, conflicts, bench record or proof, only the conflict
// count is left: no series claims what the node does not know.
func TestFleetMetricsOfAnUnknownNode(t *testing.T) {
	got := string(FleetMetrics(Fleet{}))
	for _, absent := range []string{"decision_info", "bench_", "last_proof", "host_conflict{"} {
		if strings.Contains(got, absent) {
			t.Errorf("an empty host has %s:\n%s", absent, got)
		}
	}
	if !strings.Contains(got, "rke2_proxy_backend_host_conflicts 0\n") {
		t.Errorf("no conflict count:\n%s", got)
	}
	// A label value a hand-edited plan could hold is left out, not quoted wrong.
	got = string(FleetMetrics(Fleet{Decision: plan.Decision{Backend: backend.NFTables, ProxyMode: "nftables", IptablesMode: "nft", Source: "a\"b"}}))
	if strings.Contains(got, "decision_info{") {
		t.Errorf("a source with a quote reached a label:\n%s", got)
	}
	check.PromtoolMetrics(t, []byte(got))
}

// A plan apply could not carry out (issue 30: schema 1 recorded the
// backend all the same) is no decision the fleet may count: no
// decision_info, and plan_applied 0. An earlier run's drop-in that apply
// could not replace is counted as what it is, its source unknown.
func TestFleetMetricsOfAPlanNotApplied(t *testing.T) {
	for name, c := range map[string]struct {
		doc, info string
		applied   string
	}{
		"schema 2, nothing applied": {`{"schema":2,"applied":{"nothing":"no backend can run"},"decision":{"backend":"iptables-nft","proxy_mode":"iptables","iptables_mode":"nft","source":"auto"}}`, "", "0"},
		"schema 1, no drop-in":      {`{"schema":1,"decision":{"backend":"iptables-legacy","proxy_mode":"iptables","iptables_mode":"legacy","source":"auto"},"modules_loaded":[]}`, "", "0"},
		"an earlier run's drop-in": {`{"schema":2,"applied":{"backend":"iptables-legacy","proxy_mode":"iptables","by":"earlier-run"},"decision":{"backend":"iptables-nft","proxy_mode":"iptables","iptables_mode":"nft","source":"config"}}`,
			`rke2_proxy_backend_decision_info{backend="iptables-legacy",iptables_mode="legacy",proxy_mode="iptables",source="unknown"} 1`, "1"},
	} {
		t.Run(name, func(t *testing.T) {
			h := testhost.New(t).Debian12().File(hostfs.PlanFile, c.doc)
			got := string(FleetMetrics(Of(h.Root(), nil, "", time.Now()).Fleet(distro.RKE2, time.Time{})))
			if c.info == "" && strings.Contains(got, "decision_info") || c.info != "" && !strings.Contains(got, c.info+"\n") {
				t.Errorf("decision_info: want %q:\n%s", c.info, got)
			}
			if !strings.Contains(got, "rke2_proxy_backend_plan_applied "+c.applied+"\n") {
				t.Errorf("plan_applied: want %s:\n%s", c.applied, got)
			}
			check.PromtoolMetrics(t, []byte(got))
		})
	}
}

// A node without node_exporter's directory pays no probe for the textfile.
func TestFleetMetricsNotProbedWithoutTextfileDir(t *testing.T) {
	root := testhost.New(t).Root()
	if err := WriteFleetMetrics(root, hostfs.TextfileDir, func() Fleet { t.Fatal("probed for a textfile nobody reads"); return Fleet{} }); err != nil {
		t.Fatal(err)
	}
}
