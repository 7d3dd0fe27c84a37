package detectreport

import (
	"encoding/json"
	"io"
	"strings"
	"time"

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
	Settings settings        `json:"settings"`
	Decision decide.Decision `json:"decision"`
	// HostConflicts is never null: scripts count it.
	HostConflicts []hostconflict.Finding `json:"host_conflicts"`
	CNIManifests  []apply.CNIManifest    `json:"cni_manifests,omitempty"`
	// CertifiedImage is this machine against its image's certificate.
	CertifiedImage *hostplan.Certification `json:"certified_image,omitempty"`
}

// settings is the effective config as an operator writes it: the embedded
// Config brings every key (new ones included), and the shallower Verify
// field wins in encoding/json, so verify.wait reads "5m" and
// census.interval "0s" rather than a count of nanoseconds.
type settings struct {
	config.Config
	Verify verifySettings `json:"verify"`
	Census censusSettings `json:"census"`
}

type censusSettings struct {
	Interval string `json:"interval"`
}

type verifySettings struct {
	Wait        string `json:"wait"`
	TextfileDir string `json:"textfile_dir"`
}

// WriteJSON writes the JSON document, indented, with a final newline.
func (r Report) WriteJSON(w io.Writer) error {
	conflicts := r.Conflicts
	if conflicts == nil {
		conflicts = []hostconflict.Finding{}
	}
	c := r.Config
	s := settings{Config: c, Verify: verifySettings{Wait: durationText(c.Verify.Wait), TextfileDir: c.Verify.TextfileDir}, Census: censusSettings{Interval: durationText(c.Census.Interval)}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(document{Schema: Schema, Facts: r.Facts, Settings: s, Decision: r.Decision, HostConflicts: conflicts, CNIManifests: r.Manifests, CertifiedImage: r.Certified})
}

// durationText writes a duration as an operator would ("5m", "1h30m",
// "90s" stays "1m30s"): time.Duration.String without the zero units it
// pads with, still readable by time.ParseDuration.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
