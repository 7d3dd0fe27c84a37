package prove

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// fleetNode is a Debian 12 node on iptables-nft with node_exporter's
// textfile directory.
func fleetNode(t *testing.T) *testhost.Host {
	t.Helper()
	h := testhost.New(t).Debian12().Mkdir(hostfs.TextfileDir)
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Source: "cmdline"}})
	return h
}

// A run verify calls OK that proves no backend (no expectation to prove)
// is no proof for the fleet metric either: the metric's last proof and the
// Node's verified-at come from the one state publishRun computes.
func TestLastProofIsTheStatesProof(t *testing.T) {
	h := fleetNode(t)
	c := &Command{Host: verify.Host{Root: h.Root()}, TextfileDir: hostfs.TextfileDir}
	var lastProof time.Time
	var offered []proof.State
	res := &verify.Result{OK: true, Verdict: verify.VerdictOK}
	if err := publishRun(c, distro.RKE2, res, false, 0, &lastProof, cluster{offer: func(s proof.State) { offered = append(offered, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(offered) != 1 || offered[0].Proven {
		t.Fatalf("offered %+v: want one unproven state", offered)
	}
	got, err := h.Root().ReadFile(path.Join(hostfs.TextfileDir, proof.FleetMetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !lastProof.IsZero() || strings.Contains(string(got), "last_proof") {
		t.Errorf("last proof %v and metrics\n%s\nafter an unproven run: want no last proof", lastProof, got)
	}
}

// The fleet metrics carry the heartbeat the Node condition holds and how
// long it stands, from the publisher, so the alert on them fires when the
// fleet view calls the node Unknown: a stopped watch leaves both as they
// were, and time() moves past them.
func TestFleetMetricsCarryTheConditionsHeartbeat(t *testing.T) {
	h := fleetNode(t)
	c := &Command{Host: verify.Host{Root: h.Root()}, TextfileDir: hostfs.TextfileDir}
	var lastProof time.Time
	beat := time.Unix(1796061250, 0)
	cl := cluster{offer: func(proof.State) {}, heartbeat: func() time.Time { return beat }, staleAfter: 30 * time.Minute}
	if err := publishRun(c, distro.RKE2, &verify.Result{OK: true, Verdict: verify.VerdictOK}, false, 0, &lastProof, cl); err != nil {
		t.Fatal(err)
	}
	got, err := h.Root().ReadFile(path.Join(hostfs.TextfileDir, proof.FleetMetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rke2_proxy_backend_node_condition_heartbeat_timestamp_seconds 1796061250\n", "rke2_proxy_backend_node_condition_stale_after_seconds 1800\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("fleet metrics lack %s:\n%s", want, got)
		}
	}
	check.PromtoolMetrics(t, got)
	if got := string(proof.FleetMetrics(proof.Fleet{StaleAfter: time.Hour})); strings.Contains(got, "node_condition") {
		t.Errorf("no heartbeat written yet, yet:\n%s", got)
	}
}
