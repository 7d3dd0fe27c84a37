package switchover

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// TidyPlannedHints is `cleanup --kubelet-hints`: switch's own tidy step
// (LiveHints), for the leftovers of a switch done another way (config edit
// and restart, a one-boot override made permanent), for the backend root's
// plan says kube-proxy uses on a node of distribution kind. With dryRun it
// reads and removes nothing.
func TidyPlannedHints(ctx context.Context, root hostfs.Root, kind distro.Kind, dryRun bool) (HintReport, error) {
	kubeProxy, err := cleanup.PlannedBackend(root, kind)
	if err != nil {
		return HintReport{}, err
	}
	t, err := LiveHints{Run: cleanup.Tools(dryRun)}.Tidy(ctx, kubeProxy)
	if err != nil {
		return HintReport{}, err
	}
	return HintReport{HintTidy: t, KubeProxy: kubeProxy, DryRun: dryRun}, nil
}
