package verify

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
)

// kubeProxyFiguresOrNote reads kube-proxy's figures, or appends to notes
// why not: an unreachable, garbled or oversized page is never a finding.
func kubeProxyFiguresOrNote(ctx context.Context, proxyModeURL string, notes []string) (*kubeproxy.Figures, []string) {
	f, omitted, err := kubeproxy.ReadFigures(ctx, proxyModeURL)
	if err != nil {
		return nil, append(notes, "kube-proxy's sync figures not read: "+err.Error())
	}
	return f, append(notes, omitted...)
}
