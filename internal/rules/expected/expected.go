// Package expected models kube-proxy's footprint: the chains, jumps,
// canaries, tables, sets and maps kube-proxy (and kubelet) must have written
// for a proxy mode, backend, Kubernetes version and IP family.
package expected

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Options select the footprint.
type Options struct {
	Backend    backend.Backend
	Kubernetes rke2.KubeVersion // zero: the newest layout we know
	Families   []rules.Family   // empty: both
	Services   int              // synthetic services to add
}

// Render returns the expected ruleset. TODO(expected): placeholder signature.
func Render(opts Options) (*rules.Ruleset, error) {
	return &rules.Ruleset{Backend: opts.Backend}, nil
}
