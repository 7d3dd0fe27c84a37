package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// Options are `cleanup --backend B`'s switches.
type Options struct {
	// Force cleans the backend the plan says kube-proxy uses, whose rules
	// are live (kube-proxy rebuilds them when it restarts).
	Force bool
	// DryRun plans and changes nothing.
	DryRun bool
	// Distribution says whose chains go (ownership.GroupFor): on k3s
	// flannel's and kube-router's with kube-proxy's, each while k3s's
	// config says k3s runs it.
	Distribution distro.Kind
}

// Stranded removes the distribution's group's rules (kube-proxy's; on k3s
// also flannel's and kube-router's) from backend b of this network
// namespace and returns what it removed (with DryRun, would remove). It
// refuses the backend root's plan says kube-proxy uses unless Force: those
// are the live rules, not stranded ones. No plan is no objection.
func Stranded(ctx context.Context, root hostfs.Root, b backend.Backend, opts Options) (*Plan, error) {
	p, err := plan.Read(root)
	var planned backend.Backend
	switch {
	case err == nil && !p.Decision.Disabled && p.AppliedBackend() == b && !opts.Force:
		return nil, fmt.Errorf("kube-proxy uses %s according to %s; refusing to remove its live rules (use --force to do it anyway; kube-proxy rebuilds them when it restarts)", b, hostfs.PlanFile)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err == nil && !p.Decision.Disabled:
		planned = p.AppliedBackend()
	}
	g, err := GroupOn(root, opts.Distribution)
	if err != nil {
		return nil, err
	}
	live, err := Read(ctx, Exec, b)
	if err != nil {
		return nil, err
	}
	cp := ComputeGroup(live, g.StraysIn(b, planned))
	if !opts.DryRun && !cp.Empty() {
		if err := Apply(ctx, Exec, cp); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// GroupOn is the group of root's distribution kind, what cleanup and
// switch remove. On k3s it reads
// k3s's config and units: a flannel or kube-router that k3s does not run
// (flannel-backend: none, disable-network-policy: true) is the operator's,
// with its own iptables choice, and its chains are never ours to remove.
// A config that cannot be read is an error, not k3s's defaults, which
// would remove them.
func GroupOn(root hostfs.Root, kind distro.Kind) (ownership.Group, error) {
	if len(kind.Profile().Writers) == 0 {
		return ownership.GroupOf(kind), nil
	}
	n, unreadable := facts.ReadK3sNetwork(root, kind)
	if len(unreadable) > 0 {
		return nil, fmt.Errorf("cannot tell whether k3s runs its flannel and kube-router (%s), so not whether their chains are k3s's to remove: %s; fix the read and run cleanup again", facts.KeyFlannelBackend+", "+facts.KeyDisableNetworkPolicy, strings.Join(unreadable, "; "))
	}
	return ownership.GroupFor(kind, n.Flannel, n.NetworkPolicy), nil
}

// PlannedBackend is kube-proxy's backend as root's plan records it, which
// says where kubelet's hint chains belong (`cleanup --kubelet-hints`) on
// a node of distribution kind.
func PlannedBackend(root hostfs.Root, kind distro.Kind) (backend.Backend, error) {
	p, err := plan.Read(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("no plan at %s: nothing says which backend kube-proxy uses, so nothing says where kubelet's hints belong (let %s start once, or run rke2-proxy-backend apply)", hostfs.PlanFile, kind.Name())
	case err != nil:
		return "", err
	case p.Decision.Disabled:
		return "", errors.New("rke2-proxy-backend is turned off (backend: off): nothing says where kubelet's hints belong")
	case p.AppliedBackend() == "":
		return "", fmt.Errorf("%s says apply gave %s no backend this boot (%s): nothing says where kubelet's hints belong", hostfs.PlanFile, kind.Name(), p.Applied.Nothing)
	}
	return p.AppliedBackend(), nil
}

// Tools is the Runner for this host: Exec, or with dryRun one that reads
// as Exec does and loads nothing. Every iptables change goes through an
// *-restore, which the dry runner only pretends to run.
func Tools(dryRun bool) Runner {
	if !dryRun {
		return Exec
	}
	return func(ctx context.Context, stdin string, argv ...string) (string, error) {
		if strings.HasSuffix(argv[0], "-restore") {
			return "", nil
		}
		return Exec(ctx, stdin, argv...)
	}
}
