package proof

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// appliedPlan is the plan apply records when it gave RKE2 d's backend.
func appliedPlan(d decide.Decision) plan.Plan {
	p := plan.Plan{Decision: d}
	if !d.Disabled {
		p.Applied = plan.Applied{Backend: d.Backend, ProxyMode: d.ProxyMode, DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: plan.ByApply}
	}
	return p
}

// A plan apply could not carry out is never checked as if RKE2 ran it
// (issue 30: on a kernel without the legacy modules the plan said
// iptables-nft, RKE2 ran on its own nft defaults, verify passed against
// the plan and check said 0). Check says not applied, unknown, whatever
// status verify left; in this schema and in the previous one's shape.
func TestCheckBelievesOnlyWhatWasApplied(t *testing.T) {
	nft := backend.IptablesNFT
	for name, doc := range map[string]string{
		"schema 2": `{"schema":2,"applied":{"nothing":"iptables-legacy cannot run on this host; RKE2 starts with its own defaults"},"decision":{"backend":"iptables-nft","source":"auto"}}`,
		"schema 1": `{"schema":1,"decision":{"backend":"iptables-nft","source":"auto"},"modules_loaded":[],"warnings":["could not apply"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := fixture(t, nil, &verify.Result{OK: true, Expect: nft})
			if _, err := root.WriteFileAtomic(hostfs.PlanFile, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			v := Check(root, CheckOptions{})
			if v.Status != Unknown || !strings.HasPrefix(v.Message, "not applied: apply gave RKE2 no backend this boot: ") {
				t.Errorf("Check = %s %q; want unknown, not applied", v.Status, v.Message)
			}
		})
	}
	// An earlier run's drop-in that apply could not replace is what RKE2
	// reads: verify's status of that backend is judged, another is stale.
	root := fixture(t, nil, &verify.Result{OK: true, Expect: nft})
	earlier := plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, By: plan.ByEarlierRun}, Decision: decide.Decision{Backend: nft}}
	if _, err := plan.Write(root, earlier); err != nil {
		t.Fatal(err)
	}
	if v := Check(root, CheckOptions{}); v.Status != Unknown || !strings.Contains(v.Message, "verified iptables-nft but the plan applied iptables-legacy") {
		t.Errorf("Check = %s %q; want the nft status stale against the legacy drop-in", v.Status, v.Message)
	}
}
