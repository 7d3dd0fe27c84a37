package facts

import (
	"encoding/json"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// planPath is plan.Path. The plan package cannot be imported here (plan ->
// decide -> facts); a test in package facts_test keeps the two equal.
const planPath = "/run/rke2-proxy-backend/plan.json"

// previousPlan reads the backend this boot's earlier apply recorded. No
// plan is the normal first-boot case and not reported; /run is tmpfs, so a
// plan there always belongs to the running boot.
func (p *probe) previousPlan() string {
	data, ok := p.read(planPath, "the backend applied earlier in this boot is unknown")
	if !ok {
		return ""
	}
	var doc struct {
		Decision struct {
			Backend string `json:"backend"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		p.unreadable("%s: not valid JSON (%s): the backend applied earlier in this boot is unknown; remove the file, apply writes it again", planPath, err)
		return ""
	}
	if doc.Decision.Backend == "" {
		return "" // apply recorded a disabled decision: nothing was applied
	}
	if _, err := backend.Parse(doc.Decision.Backend); err != nil {
		p.unreadable("%s: decision.backend: %s; remove the file, apply writes it again", planPath, err)
		return ""
	}
	return doc.Decision.Backend
}
