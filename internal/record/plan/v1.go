package plan

import (
	"encoding/json"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// SourceAdopted is the decision source adopt records.
const SourceAdopted = "adopted"

// v1 is schema 1's document (and the one before "schema" existed, whose
// layout is the same): the decision, and the drop-in apply wrote. Read for
// one release after schema 2, then removed with parseV1.
type v1 struct {
	Decision       Decision `json:"decision"`
	DropIn         string   `json:"drop_in,omitempty"`
	ModulesLoaded  []string `json:"modules_loaded"`
	ModulesMissing []string `json:"modules_missing,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	Kubernetes     string   `json:"kubernetes,omitempty"`
}

// parseV1 reads a schema 1 plan as what it recorded: schema 1's apply set
// drop_in only once it had written the drop-in, and adopt wrote none for
// a backend already running. Any other plan without drop_in is one whose
// decision was never given to RKE2 (the plan was refused, or the path held
// the operator's own file), whatever its decision names.
func parseV1(data []byte) (Plan, error) {
	var old v1
	if err := json.Unmarshal(data, &old); err != nil {
		return Plan{}, err
	}
	p := Plan{
		Schema: Schema, Decision: old.Decision, ModulesLoaded: old.ModulesLoaded, ModulesMissing: old.ModulesMissing,
		Warnings: old.Warnings, Kubernetes: old.Kubernetes,
	}
	d := old.Decision
	switch {
	case d.Disabled:
		p.Applied.Nothing = "rke2-proxy-backend was off (an earlier version's plan)"
	case d.Backend != "" && old.DropIn != "":
		p.Applied = Wrote(d, old.DropIn)
	case d.Backend != "" && d.Source == SourceAdopted:
		p.Applied = Applied{Backend: d.Backend, ProxyMode: d.ProxyMode, By: ByAdopt}
	default:
		p.Applied.Nothing = fmt.Sprintf("an earlier version's apply recorded %s but wrote no drop-in for it", orNone(d.Backend))
	}
	return p, nil
}

func orNone(b backend.Backend) string {
	if b == "" {
		return "no backend"
	}
	return string(b)
}
