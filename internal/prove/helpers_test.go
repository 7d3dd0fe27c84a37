package prove

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// writePlan records p as apply does when it gave RKE2 p's decision.
func writePlan(t *testing.T, root hostfs.Root, p plan.Plan) hostfs.Root {
	t.Helper()
	if !p.Decision.Disabled {
		p.Applied = plan.Applied{Backend: p.Decision.Backend, ProxyMode: p.Decision.ProxyMode, DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: plan.ByApply}
	}
	if _, err := plan.Write(root, p); err != nil {
		t.Fatal(err)
	}
	return root
}
