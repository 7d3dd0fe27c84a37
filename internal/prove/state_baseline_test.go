package prove

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// An ok run whose read of kube-proxy's counters is n nftables sync failures.
func counted(n float64) *verify.Result {
	r := result(verify.VerdictOK)
	r.Expect = backend.NFTables
	r.KubeProxy = &kubeproxy.Figures{}
	if n > 0 {
		r.KubeProxy.Failures = []kubeproxy.FailureCount{{Counter: kubeproxy.FailNFTablesSync, IPFamily: "IPv4", Count: n}}
	}
	return r
}

// watch's runs after the first read kube-proxy's counters once each: a
// rise from one run to the next fails the later run (and, kept up past
// the grace, is drift); a run that could not read them keeps the baseline.
func TestTrackerSeesFailuresRiseBetweenRuns(t *testing.T) {
	tr := Tracker{Grace: 90 * time.Second}
	steps := []struct {
		at   int
		r    *verify.Result
		want string
	}{
		{0, counted(2), verify.VerdictOK},                  // failures long before watch started: no rise seen
		{600, counted(2), verify.VerdictOK},                // none since
		{1200, result(verify.VerdictOK), verify.VerdictOK}, // /metrics not read: baseline kept
		{1800, counted(3), verify.VerdictFailed},           // one more since the run at 600
		{1890, counted(6), verify.VerdictFailed},           // still rising after the grace: drift
		{2490, counted(6), verify.VerdictOK},               // recovered
	}
	var events []string
	for _, s := range steps {
		ev, changed := tr.Observe(at(s.at), s.r, Cause{})
		if s.r.Verdict != s.want {
			t.Fatalf("run at %ds: verdict %s findings %v, want %s", s.at, s.r.Verdict, s.r.Findings, s.want)
		}
		if changed {
			events = append(events, map[bool]string{true: "drift", false: "recovered"}[ev.Drift])
		}
	}
	if strings.Join(events, ",") != "drift,recovered" {
		t.Errorf("events %v, want drift then recovered", events)
	}
	r := counted(9)
	tr.Observe(at(3090), r, Cause{})
	if len(r.Findings) != 1 || r.Findings[0].Kind != verify.KindSyncFailing || !strings.Contains(r.Findings[0].Message, "within 10m0s kubeproxy_sync_proxy_rules_nftables_sync_failures_total 6 -> 9") {
		t.Errorf("findings %+v, want the rise since the run 10m before", r.Findings)
	}
}
