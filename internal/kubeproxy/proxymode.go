package kubeproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultProxyModeURL is kube-proxy's metrics server (--metrics-bind-address
// 127.0.0.1:10249), which answers GET /proxyMode with the mode in plain text.
const DefaultProxyModeURL = "http://127.0.0.1:10249/proxyMode"

const (
	// ProxyModeTimeout bounds one request, connect to last byte.
	ProxyModeTimeout = 2 * time.Second
	// proxyModeMaxBody is more than any mode name; a longer answer is not
	// kube-proxy's.
	proxyModeMaxBody = 64
)

// proxyModes are the answers kube-proxy gives on Linux.
var proxyModes = []string{"iptables", "nftables", "ipvs"}

// CheckProxyModeURL accepts only a plain http URL of /proxyMode on a
// loopback address or one of this node's own addresses: kube-proxy's
// metrics server on this node (kube-proxy can bind nothing else). Anything
// else would let a config or a flag send the request off the node.
func CheckProxyModeURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("proxy mode URL %q: %w", raw, err)
	}
	ip := net.ParseIP(u.Hostname())
	switch {
	case u.Scheme != "http":
		return fmt.Errorf("proxy mode URL %q: scheme %q, want http", raw, u.Scheme)
	case ip == nil || !ip.IsLoopback() && !isNodeAddress(ip):
		return fmt.Errorf("proxy mode URL %q: host %q is neither a loopback address nor one of this node's (kube-proxy's metrics server listens on 127.0.0.1:10249 unless its metrics-bind-address says otherwise)", raw, u.Hostname())
	case u.Port() == "":
		return fmt.Errorf("proxy mode URL %q: no port (kube-proxy's is 10249)", raw)
	case u.Path != "/proxyMode" || u.RawQuery != "" || u.User != nil || u.Fragment != "":
		return fmt.Errorf("proxy mode URL %q: want exactly http://HOST:PORT/proxyMode", raw)
	}
	return nil
}

// Client is the client for kube-proxy's metrics server: no proxy from the
// environment, no connection kept, no redirect followed, so the request
// stays on this node, to this port (CheckProxyModeURL holds the URL to
// loopback or this node's own addresses).
func Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Answer is what answered on /proxyMode: kube-proxy's mode, or the problem
// with an answer that is not one (something else, or a kube-proxy in
// trouble, holds the port).
type Answer struct {
	Mode, Problem string
}

// AskMode makes one request with client (use Client). err is set only when
// no HTTP answer came; the caller decides whether to ask again.
func AskMode(ctx context.Context, client *http.Client, target string) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return Answer{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, proxyModeMaxBody+1))
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return Answer{Problem: fmt.Sprintf("%s answered %s with a redirect (to %q); kube-proxy never redirects, so something else answers there", target, resp.Status, resp.Header.Get("Location"))}, nil
	case resp.StatusCode != http.StatusOK:
		return Answer{Problem: fmt.Sprintf("%s answered %s, not kube-proxy's mode", target, resp.Status)}, nil
	case err != nil:
		return Answer{Problem: fmt.Sprintf("%s: reading the answer: %v", target, err)}, nil
	case len(body) > proxyModeMaxBody:
		return Answer{Problem: fmt.Sprintf("%s answered more than %d bytes, not a kube-proxy mode", target, proxyModeMaxBody)}, nil
	}
	mode := strings.TrimSpace(string(body))
	for _, m := range proxyModes {
		if mode == m {
			return Answer{Mode: mode}, nil
		}
	}
	return Answer{Problem: fmt.Sprintf("%s answered %q, which is not a kube-proxy mode (%s)", target, mode, strings.Join(proxyModes, ", "))}, nil
}
