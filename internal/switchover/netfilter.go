package switchover

import (
	"context"
	"fmt"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
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

func (v LiveVerifier) Verify(ctx context.Context, b backend.Backend) (*verify.Result, error) {
	// The same shallow read as the verify command: the skeleton and where
	// it lives, never per-service chains.
	reader := verify.NewReader(v.Root)
	families, why, err := facts.IPFamilies(v.Root)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", b, err)
	}
	return verify.Run(ctx, verify.Options{
		Families:          families,
		SingleStackReason: why,
		Expect:            b,
		ExpectSource:      "switch",
		// A restart cannot move kubelet's hint chains: kubelet writes them
		// with the host's iptables alternative. When it was not moved,
		// the hints' place is a warning (the tidy step logs its fix), not
		// a reason to roll back a kube-proxy that is right.
		OneBootOverride: true,
		Reader:          reader,
		Wait:            v.Wait,
		Poll:            v.Poll,
		ProxyModeURL:    v.ProxyModeURL,
		Progress:        v.Progress,
	})
}

// LiveCleaner is `cleanup --backend B --force`'s code.
type LiveCleaner struct {
	Run cleanup.Runner
}

func (c LiveCleaner) Clean(ctx context.Context, b backend.Backend) (*cleanup.Plan, error) {
	run := c.Run
	if run == nil {
		run = cleanup.Exec
	}
	live, err := cleanup.Read(ctx, run, b)
	if err != nil {
		return nil, err
	}
	p := cleanup.Compute(live)
	if p.Empty() {
		return p, nil
	}
	return p, cleanup.Apply(ctx, run, p)
}
