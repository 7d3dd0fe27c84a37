package verify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultProxyModeURL is kube-proxy's metrics server (--metrics-bind-address
// 127.0.0.1:10249), which answers GET /proxyMode with the mode in plain text.
const DefaultProxyModeURL = "http://127.0.0.1:10249/proxyMode"

// proxyModeTimeout keeps an absent kube-proxy from holding verify up.
const proxyModeTimeout = 2 * time.Second

// proxyMode asks kube-proxy for its mode. When it cannot, mode is "" and
// note says why (the check is skipped, not failed: kube-proxy may bind its
// metrics elsewhere).
func proxyMode(ctx context.Context, url string) (mode, note string) {
	ctx, cancel := context.WithTimeout(ctx, proxyModeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Sprintf("proxy mode not checked: bad URL %q: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Sprintf("proxy mode not checked: %s unreachable: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return "", fmt.Sprintf("proxy mode not checked: reading %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Sprintf("proxy mode not checked: %s answered %s", url, resp.Status)
	}
	return strings.TrimSpace(string(body)), ""
}
