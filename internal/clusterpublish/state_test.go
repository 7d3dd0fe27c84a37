package clusterpublish

import (
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nodecheck"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// The Node condition never says verified, nor names a mode or a source,
// for a plan apply could not carry out (issue 30: schema 1 recorded it
// all the same, and verify passed against it). An earlier run's drop-in
// that apply could not replace is what RKE2 runs: its mode is published,
// its source is not known.
func TestStateOfBelievesOnlyWhatWasApplied(t *testing.T) {
	nft := backend.IptablesNFT
	ok := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: nft, ExpectSource: hostfs.PlanFile}
	decision := plan.Decision{Backend: nft, ProxyMode: "iptables", IptablesMode: "nft", Source: "config"}
	for _, c := range []struct {
		name         string
		p            plan.Plan
		status       nodecheck.Status
		proven       bool
		mode, source string
	}{
		{"applied", plan.Plan{Applied: plan.Applied{Backend: nft, ProxyMode: "iptables", By: plan.ByApply}, Decision: decision}, nodecheck.OK, true, "iptables", "config"},
		{"not applied", plan.Plan{Applied: plan.Applied{Nothing: "no backend can run"}, Decision: decision}, nodecheck.Unknown, false, "", ""},
		{"an earlier run's drop-in", plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", By: plan.ByEarlierRun}, Decision: decision}, nodecheck.Unknown, false, "iptables", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := hostfs.New(t.TempDir())
			if _, err := plan.Write(root, c.p); err != nil {
				t.Fatal(err)
			}
			if err := verify.WriteStatus(root, ok); err != nil {
				t.Fatal(err)
			}
			res := *ok
			res.ProxyMode = "" // kube-proxy did not answer: the mode comes from the plan
			s := StateOf(root, &res, time.Now())
			if s.Verdict.Status != c.status || s.Proven != c.proven || s.Mode != c.mode || s.Source != c.source {
				t.Errorf("state %+v; want status %s, proven %t, mode %q, source %q", s, c.status, c.proven, c.mode, c.source)
			}
		})
	}
}
