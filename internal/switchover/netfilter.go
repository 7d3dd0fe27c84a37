package switchover

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// LiveVerifier runs verify against this network namespace's rules.
type LiveVerifier struct {
	Root hostfs.Root
	// Wait bounds the wait for kube-proxy's sync after a restart.
	// Poll is how often the change stamp is looked at meanwhile (0: verify's default).
	Wait, Poll   time.Duration
	ProxyModeURL string
	Progress     func(string)
}

// Verify judges the node as the verify command does, from the same
// verify.ForHost, CNI included: the switch moves kube-proxy only, and a
// CNI that stays in the old backend leaves pods reaching some Services and
// not others, so its cni-other-backend finding fails the verify step and
// rolls the switch back, naming the chart value to set (the CNI's own
// nftables tables are listed too). Only the proxy-mode endpoint is the
// caller's (ProxyModeURL, "" skips the check).
func (v LiveVerifier) Verify(ctx context.Context, b backend.Backend) (*verify.Result, error) {
	h := verify.Host{Root: v.Root, Claim: verify.Claim{Backend: string(b)}, ProxyMode: &kubeproxy.Endpoint{URL: v.ProxyModeURL}}
	if v.Progress != nil {
		h.Warn = func(u string) { v.Progress("warning: " + u) }
	}
	// With a claimed backend ForHost never says "cannot tell".
	opts, _, err := verify.ForHost(h)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", b, err)
	}
	opts.ExpectSource = "switch"
	// As the verify unit judges: the hints' place is a warning only during
	// a one-boot override (the switch itself judges them: verifyOK).
	if p, err := plan.Read(v.Root); err == nil {
		opts.OneBootOverride = p.Decision.Source == config.SourceCmdline
	}
	opts.Wait, opts.Poll, opts.Progress = v.Wait, v.Poll, v.Progress
	res, err := verify.Run(ctx, opts)
	if err != nil {
		return res, err
	}
	// As the verify command does: ipvs state left on a node out of ipvs
	// fails the verdict (a migration's last proof; the sweep ran before).
	verify.AddIPVSLeftovers(opts, res)
	return res, nil
}

// LiveCleaner is `cleanup --backend B --force`'s code, for the
// distribution's group: on k3s flannel and kube-router write again in the
// new backend through the reset bin/aux links when k3s restarts, so their
// chains in the old one are stranded as kube-proxy's are, and verify
// fails on them until they go.
type LiveCleaner struct {
	Run cleanup.Runner
	// Group is whose rules go (nil: kube-proxy's alone, RKE2's group).
	Group ownership.Group
}

// Owners is the group Clean sweeps.
func (c LiveCleaner) Owners() ownership.Group {
	if c.Group == nil {
		return ownership.KubeProxyOnly
	}
	return c.Group
}

// Clean removes the group's rules from b while kube-proxy runs in
// kubeProxy (Group.StraysIn). Leaving nftables mode, or abandoning it in a
// rollback, also sweeps what lived beside it in another backend
// (Group.LeftBeside: k3s's flannel and kube-router in iptables-nft),
// unless kube-proxy runs there now and they with it.
func (c LiveCleaner) Clean(ctx context.Context, b, kubeProxy backend.Backend) (*cleanup.Plan, error) {
	g := c.Owners()
	p, err := c.clean(ctx, b, g.StraysIn(b, kubeProxy))
	where, left := g.LeftBeside(b, kubeProxy)
	if err != nil || len(left) == 0 {
		return p, err
	}
	cp, err := c.clean(ctx, where, left)
	if err != nil {
		return p, err
	}
	for _, r := range cp.Removals {
		p.Removals = append(p.Removals, string(where)+": "+r)
	}
	p.Owners = append(p.Owners, cp.Owners...)
	return p, nil
}

func (c LiveCleaner) clean(ctx context.Context, b backend.Backend, g ownership.Group) (*cleanup.Plan, error) {
	run := c.Run
	if run == nil {
		run = cleanup.Exec
	}
	fams := []rules.Family{rules.IPv4, rules.IPv6}
	if b != backend.NFTables {
		// nftables is read in-process already; for iptables, only the
		// families with something to remove get their *-save.
		pre, err := inProcess(ctx, b)
		if err != nil {
			return nil, err
		}
		p := cleanup.ComputeGroup(pre, g)
		if p.Empty() {
			return p, nil
		}
		if known := cleanup.ComputeKnownJumps(pre, g); known != nil {
			// Interrupted, it is not kube-proxy's text that failed.
			if err := cleanup.Apply(ctx, run, known); err == nil || ctx.Err() != nil {
				return known, err
			}
		}
		fams = slices.Sorted(maps.Keys(p.Scripts))
	}
	live, err := cleanup.ReadFamilies(ctx, run, b, fams...)
	if err != nil {
		return nil, err
	}
	p := cleanup.ComputeGroup(live, g)
	if p.Empty() {
		return p, nil
	}
	return p, cleanup.Apply(ctx, run, p)
}

// inProcess reads iptables backend b as verify does, in this process
// (legacy through its socket, iptables-nft over netlink), every rule's
// jump and comment kept: enough to tell whose chains and jumps b holds.
// cleanup's *-save read, whose exact rule text its "-D" lines need (the
// kernel then checks each is the rule read), runs only for a family
// where this finds something to remove: most clean steps find nothing
// (the target before the restart; kubelet's chains already tidy), and
// then no child runs at all. Anything written after this read is what
// a *-save a moment earlier would have missed too.
func inProcess(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	r := verify.NewReader(hostfs.New("/"))
	r.SkipChain = nil
	rs, err := r.Read(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read %s rules: %w", b, err)
	}
	return rs, nil
}
