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
	data, err := plan.Marshal(plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, By: plan.ByApply},
		Decision: plan.Decision{Backend: backend.IptablesLegacy}})
	if err != nil {
		t.Fatal(err)
	}
	h.File(hostfs.PlanFile, string(data))
	f := facts.Probe(h.Root(), facts.Options{})
	if f.PreviousPlan != string(backend.IptablesLegacy) || len(f.Unreadable) != 0 {
		t.Errorf("previous plan %q, unreadable %q", f.PreviousPlan, f.Unreadable)
	}

	h.File(hostfs.PlanFile, `{"decision":{"backend":"modern"},"drop_in":"/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml"}`)
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

// Only what RKE2 was given is "already applied" (issue 30): a plan whose
// backend apply could not apply, in this schema or the previous one's
// shape (no drop-in written), keeps nothing; a drop-in an earlier run left
// and this one could not replace is what RKE2 reads, and is kept.
func TestPreviousPlanIsWhatWasApplied(t *testing.T) {
	notApplied, err := plan.Marshal(plan.Plan{Applied: plan.Applied{Nothing: "no backend can run"},
		Decision: plan.Decision{Backend: backend.IptablesLegacy}})
	if err != nil {
		t.Fatal(err)
	}
	earlier, err := plan.Marshal(plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, By: plan.ByEarlierRun},
		Decision: plan.Decision{Backend: backend.IptablesNFT}})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		doc  string
		want string
	}{
		"nothing applied":                 {string(notApplied), ""},
		"schema 1, no drop-in written":    {`{"schema":1,"decision":{"backend":"iptables-legacy","source":"auto"},"modules_loaded":[]}`, ""},
		"schema 1, drop-in written":       {`{"schema":1,"decision":{"backend":"iptables-legacy","source":"auto"},"drop_in":"/x","modules_loaded":[]}`, "iptables-legacy"},
		"an earlier run's drop-in stands": {string(earlier), "iptables-legacy"},
	} {
		h := testhost.New(t)
		h.File(hostfs.PlanFile, c.doc)
		f := facts.Probe(h.Root(), facts.Options{})
		if f.PreviousPlan != c.want || len(f.Unreadable) != 0 {
			t.Errorf("%s: previous plan %q (want %q), unreadable %q", name, f.PreviousPlan, c.want, f.Unreadable)
		}
	}
}
