package kubeproxy

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// AskProxyMode asks kube-proxy's /proxyMode once, with this package's
// bounds (a URL on this node only, no proxy, no redirect, a short body, a
// 2 s timeout), for callers that must know what runs right now (adopt). It returns the
// mode, or a note why nothing answered, or the problem with what answered.
func AskProxyMode(ctx context.Context, url string) (mode, note, problem string) {
	if err := CheckProxyModeURL(url); err != nil {
		return "", "proxy mode not asked: " + err.Error(), ""
	}
	c, err := AskMode(ctx, Client(ProxyModeTimeout), url)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "", fmt.Sprintf("nothing listens on %s (kube-proxy not up, or its metrics bound elsewhere)", url), ""
	case err != nil:
		return "", fmt.Sprintf("%s unreachable: %v", url, err), ""
	}
	return c.Mode, "", c.Problem
}
