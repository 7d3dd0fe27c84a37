package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// IPVSLeftovers is `cleanup --ipvs-leftovers`: the sweep a migration off
// ipvs ends with (SweepAfterIPVS: ipvs mode's own chains in both iptables
// backends, then its sets, kube-ipvs0 and the virtual servers on it) of
// this network namespace, once root's plan says kube-proxy is not in ipvs
// mode. On an ipvs node kube-ipvs0 and the virtual servers are kube-proxy's
// live dataplane, not leftovers, so without that word the sweep refuses
// unless Force, before it reads or writes anything.
func IPVSLeftovers(ctx context.Context, root hostfs.Root, opts Options) (AfterIPVS, error) {
	if err := ipvsGuard(root, opts.Distribution); err != nil && !opts.Force {
		return AfterIPVS{}, err
	}
	return SweepAfterIPVS(ctx, Tools(opts.DryRun), opts.DryRun)
}

// ipvsGuard says why the sweep must not run on a node of distribution kind.
func ipvsGuard(root hostfs.Root, kind distro.Kind) error {
	p, err := plan.Read(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no plan at %s: nothing says kube-proxy is out of ipvs mode, so its ipvs state may be live; refusing (let %s start once, or use --force)", hostfs.PlanFile, kind.Name())
	case err != nil:
		return err
	case p.Decision.Disabled:
		return fmt.Errorf("%s records no managed proxy mode (the tool is off, %[2]s runs no kube-proxy, or %[2]s's config pins ipvs): kube-proxy's ipvs state may be live; refusing (use --force when it is not)", hostfs.PlanFile, kind.Name())
	case p.Decision.ProxyMode == "ipvs":
		return fmt.Errorf("kube-proxy runs in ipvs mode according to %s: kube-ipvs0 and its virtual servers are live, not leftovers; refusing (use --force to remove them anyway)", hostfs.PlanFile)
	}
	return nil
}
