package facts

import (
	"encoding/json"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// previousPlan reads the backend this boot's earlier apply recorded. No
// plan is the normal first-boot case and not reported; /run is tmpfs, so a
// plan there always belongs to the running boot.
func (p *probe) previousPlan() string {
	data, ok := p.read(hostfs.PlanFile, "the backend applied earlier in this boot is unknown")
	if !ok {
		return ""
	}
	var doc struct {
		Decision struct {
			Backend string `json:"backend"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		p.unreadable("%s: not valid JSON (%s): the backend applied earlier in this boot is unknown; remove the file, apply writes it again", hostfs.PlanFile, err)
		return ""
	}
	if doc.Decision.Backend == "" {
		return "" // apply recorded a disabled decision: nothing was applied
	}
	if _, err := backend.Parse(doc.Decision.Backend); err != nil {
		p.unreadable("%s: decision.backend: %s; remove the file, apply writes it again", hostfs.PlanFile, err)
		return ""
	}
	return doc.Decision.Backend
}
