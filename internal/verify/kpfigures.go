package verify

import (
	"context"
	"fmt"
	"time"

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

// kubeProxySignals reads kube-proxy's figures into res and judges its own
// failure signals: a change queued too long without a successful sync is
// a finding at once; failures it has counted are a finding only if they
// still rise, so verify reads again failureRecheck later when --wait
// leaves that long (a failure long ago that kube-proxy recovered from is
// not one; watch compares between its runs instead).
func kubeProxySignals(ctx context.Context, opts Options, deadline time.Time, res *Result) {
	first, notes := kubeProxyFiguresOrNote(ctx, opts.ProxyModeURL, nil)
	res.KubeProxy = first
	if first == nil {
		res.Notes = append(res.Notes, notes...)
		return
	}
	g := newGroup(opts)
	stale := g.staleSyncs(first, opts.Now())
	left := deadline.Sub(opts.Now())
	switch {
	case len(stale) > 0 || !failed(first):
		res.Findings = append(res.Findings, stale...)
		res.Notes = append(res.Notes, notes...)
		return
	case left < failureRecheck:
		res.Notes = append(res.Notes, notes...)
		res.Notes = append(res.Notes, fmt.Sprintf("kube-proxy has counted sync failures since it started; whether they still rise needs a second read %s later, and --wait left %s (the watch service compares them between its runs)",
			failureRecheck, left.Round(time.Second)))
		return
	}
	began := opts.Now()
	if err := opts.Sleep(ctx, failureRecheck); err != nil {
		res.Notes = append(res.Notes, notes...)
		res.Notes = append(res.Notes, fmt.Sprintf("kube-proxy's sync failures not read again: %v", err))
		return
	}
	// The second read's notes replace the first's: its figures are kept.
	second, notes := kubeProxyFiguresOrNote(ctx, opts.ProxyModeURL, nil)
	res.Notes = append(res.Notes, notes...)
	if second == nil {
		return
	}
	res.KubeProxy = second
	now := opts.Now()
	findings, warnings := g.risingFailures(first, second, now.Sub(began), now)
	res.Findings = append(res.Findings, findings...)
	res.Findings = append(res.Findings, g.staleSyncs(second, now)...)
	res.Warnings = append(res.Warnings, warnings...)
	if len(findings)+len(warnings) == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("kube-proxy has counted sync failures since it started, none in the %s between verify's two reads", now.Sub(began).Round(time.Second)))
	}
}
