package detectreport

import (
	"encoding/json"
	"io"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// Schema versions detect's JSON document for scripts: raise it when a key
// is removed, renamed or changes type; adding keys does not raise it.
const Schema = 1

// document is detect's JSON document (DESIGN.md's contract, plus the
// schema version and the effective settings the decision was made with).
type document struct {
	Schema   int             `json:"schema"`
	Facts    facts.Facts     `json:"facts"`
	Settings config.Config   `json:"settings"`
	Decision decide.Decision `json:"decision"`
	// HostConflicts is never null: scripts count it.
	HostConflicts []hostconflict.Finding `json:"host_conflicts"`
	CNIManifests  []apply.CNIManifest    `json:"cni_manifests,omitempty"`
	// CertifiedImage is this machine against its image's certificate.
	CertifiedImage *hostplan.Certification `json:"certified_image,omitempty"`
}

// WriteJSON writes the JSON document, indented, with a final newline.
func (r Report) WriteJSON(w io.Writer) error {
	conflicts := r.Conflicts
	if conflicts == nil {
		conflicts = []hostconflict.Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(document{Schema: Schema, Facts: r.Facts, Settings: r.Config, Decision: r.Decision, HostConflicts: conflicts, CNIManifests: r.Manifests, CertifiedImage: r.Certified})
}
