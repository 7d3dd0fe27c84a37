package switchover

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// HintReport is what `cleanup --kubelet-hints` prints: one tidy, for
// kube-proxy's backend, and whether it was only a dry run, as JSON or as
// Text.
type HintReport struct {
	*HintTidy
	KubeProxy backend.Backend `json:"kube_proxy"`
	DryRun    bool            `json:"dry_run"`
	// Verify is verify's verdict after chains went (Reverify).
	Verify *cleanup.Reverified `json:"verify,omitempty"`
}

// Text says where the hints belong, then each chain removed and kept.
func (r HintReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cleanup: kubelet's hints belong in %s for kube-proxy's %s; kubelet wrote its own there for: %s\n", r.Want, r.KubeProxy, familiesText(r.Written))
	if len(r.Removed) == 0 {
		b.WriteString("cleanup: no leftover kubelet chain to remove\n")
	} else {
		cleanup.WriteRemovals(&b, r.DryRun, "leftover kubelet chain(s)", r.Removed)
	}
	for _, line := range r.Left {
		fmt.Fprintf(&b, "kept: %s\n", line)
	}
	b.WriteString(r.Verify.Text())
	return b.String()
}

func familiesText(fams []rules.Family) string {
	if len(fams) == 0 {
		return "no family yet"
	}
	s := make([]string, len(fams))
	for i, f := range fams {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}
