package verify

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
)

// proxyModeGrace is how long a refusing endpoint is asked again once
// kube-proxy's rules are proven. kube-proxy starts its metrics server
// before its first sync (cmd/kube-proxy/app/server.go), so the kube-proxy
// that wrote them already listens; the grace covers rules a previous
// kube-proxy left while RKE2's restart starts the next one. Waiting longer
// could only wait out --wait for a server that is off.
const proxyModeGrace = 10 * time.Second

// proxyModeCheck is what asking kube-proxy gave: its mode, or a note why
// the check was skipped (nothing listens), or a problem with what answered.
type proxyModeCheck struct {
	mode, note, problem string
}

// checkProxyMode asks kube-proxy for its mode. A refused connection means
// kube-proxy is not up yet: it asks again every Poll until the deadline,
// or for proxyModeGrace when synced says kube-proxy's rules are already
// proven, then skips the check with a note. Any answer that is not a mode
// is a problem: something that is not kube-proxy, or a kube-proxy in
// trouble, holds its port.
func checkProxyMode(ctx context.Context, opts Options, deadline time.Time, synced bool) proxyModeCheck {
	if err := kubeproxy.CheckProxyModeURL(opts.ProxyModeURL); err != nil {
		return proxyModeCheck{note: "proxy mode not checked: " + err.Error()}
	}
	from := ""
	if opts.ProxyModeSource != "" {
		from = " (from " + opts.ProxyModeSource + ")"
	}
	if grace := opts.Now().Add(proxyModeGrace); synced && grace.Before(deadline) {
		deadline = grace
	}
	client := kubeproxy.Client(kubeproxy.ProxyModeTimeout)
	for {
		a, err := kubeproxy.AskMode(ctx, client, opts.ProxyModeURL)
		if err == nil {
			return proxyModeCheck{mode: a.Mode, problem: a.Problem}
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return proxyModeCheck{note: fmt.Sprintf("proxy mode not checked: %s%s unreachable: %v", opts.ProxyModeURL, from, err)}
		}
		if opts.Now().Add(opts.Poll).After(deadline) {
			if synced {
				return proxyModeCheck{note: fmt.Sprintf("proxy mode not checked: nothing listens on %s%s although kube-proxy's rules are complete; kube-proxy listens there before its first sync unless its metrics server is off or bound elsewhere (kube-proxy-arg metrics-bind-address in RKE2's config)", opts.ProxyModeURL, from)}
			}
			return proxyModeCheck{note: fmt.Sprintf("proxy mode not checked: nothing listens on %s%s (kube-proxy not up, or its metrics bound elsewhere)", opts.ProxyModeURL, from)}
		}
		if serr := opts.Sleep(ctx, opts.Poll); serr != nil {
			return proxyModeCheck{note: fmt.Sprintf("proxy mode not checked: %v", serr)}
		}
	}
}
