package switchover

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Without a plan nothing says where kubelet's hints belong: TidyPlannedHints
// says so and reads no rules (the netns path runs in
// testscripts/testdata/cleanup_kubelet_hints.txtar).
func TestTidyPlannedHintsNeedsAPlan(t *testing.T) {
	r, err := TidyPlannedHints(context.Background(), testhost.New(t).Root(), distro.RKE2, true)
	if err == nil || !strings.Contains(err.Error(), "no plan at "+hostfs.PlanFile) || r.HintTidy != nil {
		t.Errorf("no plan: %+v, %v; want the missing plan named and nothing tidied", r, err)
	}
}
