// Package detectreport is detect's report: the host facts, the effective
// settings, the decision with its reasons, what on the host stands in the
// backend's way, and the CNI manifests it needs, as the short text an
// operator reads and the versioned JSON document scripts read.
package detectreport

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// Report is one host's plan with what detect adds to it.
type Report struct {
	hostplan.Plan
	Conflicts []hostconflict.Finding
	Manifests []apply.CNIManifest
}

// New finds the host conflicts for the decided backend and renders the
// CNI manifests it needs (the same apply would write).
func New(p hostplan.Plan) (Report, error) {
	manifests, err := apply.CNIManifests(p.Facts, p.Decision)
	if err != nil {
		return Report{}, fmt.Errorf("render the CNI's HelmChartConfig: %w", err)
	}
	return Report{Plan: p, Conflicts: hostconflict.Find(p.Facts, p.Decision.Backend), Manifests: manifests}, nil
}
