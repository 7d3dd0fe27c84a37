package facts_test

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The probe reads plan.json through plan.Parse, bounded like every host
// file it reads; what plan writes, it reads back.
func TestPreviousPlanReadsWhatPlanWrites(t *testing.T) {
	h := testhost.New(t)
	data, err := plan.Marshal(plan.Plan{Decision: plan.Decision{Backend: backend.IptablesLegacy}})
	if err != nil {
		t.Fatal(err)
	}
	h.File(hostfs.PlanFile, string(data))
	f := facts.Probe(h.Root(), facts.Options{})
	if f.PreviousPlan != string(backend.IptablesLegacy) || len(f.Unreadable) != 0 {
		t.Errorf("previous plan %q, unreadable %q", f.PreviousPlan, f.Unreadable)
	}

	h.File(hostfs.PlanFile, `{"decision":{"backend":"modern"}}`)
	f = facts.Probe(h.Root(), facts.Options{})
	if f.PreviousPlan != "" || len(f.Unreadable) != 1 {
		t.Errorf("previous plan %q, unreadable %q", f.PreviousPlan, f.Unreadable)
	}
}

// A plan of a schema this version does not know is unreadable, and the
// note says the value and what to do, not "not valid JSON".
func TestPreviousPlanOfAnUnknownSchema(t *testing.T) {
	h := testhost.New(t)
	h.File(hostfs.PlanFile, `{"schema":7,"decision":{"backend":"iptables-nft"}}`)
	f := facts.Probe(h.Root(), facts.Options{})
	if f.PreviousPlan != "" || len(f.Unreadable) != 1 || !strings.Contains(f.Unreadable[0], "schema 7 is not one this rke2-proxy-backend reads") {
		t.Errorf("previous plan %q, unreadable %q", f.PreviousPlan, f.Unreadable)
	}
}
