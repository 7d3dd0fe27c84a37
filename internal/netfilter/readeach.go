package netfilter

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// ReadEach reads the rules of only ("" is every backend, in backend.All's
// order) with r. Reading several, a backend whose tool is not installed is
// passed to skipped and left out: one missing tool must not hide the other
// backends. Any other error, or the one backend asked for lacking its tool,
// ends the read.
func ReadEach(ctx context.Context, r Reader, only backend.Backend, skipped func(backend.Backend, error)) (rules.Rulesets, error) {
	backends := backend.All
	if only != "" {
		backends = []backend.Backend{only}
	}
	var out rules.Rulesets
	for _, b := range backends {
		rs, err := r.Read(ctx, b)
		if IsNotInstalled(err) && len(backends) > 1 {
			skipped(b, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, nil
}
