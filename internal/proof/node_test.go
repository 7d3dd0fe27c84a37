package proof

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// The Node condition never says verified, nor names a mode or a source,
// for a plan apply could not carry out (issue 30: schema 1 recorded it
// all the same, and verify passed against it). An earlier run's drop-in
// that apply could not replace is what RKE2 runs: its mode is published,
// its source is not known.
func TestStateBelievesOnlyWhatWasApplied(t *testing.T) {
	nft := backend.IptablesNFT
	ok := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: nft, ExpectSource: hostfs.PlanFile}
	decision := plan.Decision{Backend: nft, ProxyMode: "iptables", IptablesMode: "nft", Source: "config"}
	for _, c := range []struct {
		name         string
		p            plan.Plan
		status       Status
		proven       bool
		mode, source string
	}{
		{"applied", plan.Plan{Applied: plan.Applied{Backend: nft, ProxyMode: "iptables", By: plan.ByApply}, Decision: decision}, OK, true, "iptables", "config"},
		{"not applied", plan.Plan{Applied: plan.Applied{Nothing: "no backend can run"}, Decision: decision}, Unknown, false, "", ""},
		{"an earlier run's drop-in", plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", By: plan.ByEarlierRun}, Decision: decision}, Unknown, false, "iptables", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := hostfs.New(t.TempDir())
			if _, err := plan.Write(root, c.p); err != nil {
				t.Fatal(err)
			}
			res := *ok
			res.ProxyMode = "" // kube-proxy did not answer: the mode comes from the plan
			s := Of(root, &res, "", time.Now())
			if s.Verdict.Status != c.status || s.Proven != c.proven || s.Mode != c.mode || s.Source != c.source {
				t.Errorf("state %+v; want status %s, proven %t, mode %q, source %q", s, c.status, c.proven, c.mode, c.source)
			}
		})
	}
}

// The state judges the run's own result, never a status.json read back:
// an older result on disk says nothing of this run; a run without a
// result, or whose result could not be stored, cannot tell, in the words
// check finds in the record it leaves.
func TestStateJudgesTheRunNotTheDisk(t *testing.T) {
	nft := backend.IptablesNFT
	root := hostfs.New(t.TempDir())
	if _, err := plan.Write(root, plan.Plan{Applied: plan.Applied{Backend: nft, ProxyMode: "iptables", By: plan.ByApply}, Decision: plan.Decision{Backend: nft, Source: "auto"}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteStatus(root, &verify.Result{Verdict: verify.VerdictFailed, Expect: nft, Findings: []verify.Finding{{Kind: verify.KindStranded, Message: "old"}}}); err != nil {
		t.Fatal(err)
	}
	ok := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: nft}
	if s := Of(root, ok, "", time.Now()); s.Verdict.Status != OK || !s.Proven || s.Backend != string(nft) {
		t.Errorf("an ok run over an older failed status: %+v; want ok and proven", s)
	}
	none := Of(root, nil, "verify could not run: no /proc", time.Now())
	if none.Verdict != (Verdict{Unknown, "cannot tell: the last verify run left no result: verify could not run: no /proc"}) || none.Proven {
		t.Errorf("a run without a result: %+v", none)
	}
	if err := none.Store(Outputs{}); err != nil {
		t.Fatal(err)
	}
	if v := Check(root, CheckOptions{}); v != none.Verdict {
		t.Errorf("check on the stored record says %+v, the run's state %+v", v, none.Verdict)
	}
	// status.json cannot be replaced (a directory holds its place): the
	// result is lost, and the old record stands.
	if err := os.Remove(root.Path(hostfs.StatusFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root.Path(hostfs.StatusFile+"/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Of(root, ok, "", time.Now())
	if err := s.Store(Outputs{}); err == nil || s.Verdict.Status != Unknown || s.Proven || !strings.HasPrefix(s.Verdict.Message, "cannot tell: the last verify run left no result: write status") {
		t.Errorf("a result that could not be stored: %v, %+v; want cannot tell, not proven", err, s)
	}
}
