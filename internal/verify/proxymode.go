package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// DefaultProxyModeURL is kube-proxy's metrics server (--metrics-bind-address
// 127.0.0.1:10249), which answers GET /proxyMode with the mode in plain text.
const DefaultProxyModeURL = "http://127.0.0.1:10249/proxyMode"

const (
	// proxyModeTimeout bounds one request, connect to last byte.
	proxyModeTimeout = 2 * time.Second
	// proxyModeGrace is how long a refusing endpoint is asked again once
	// kube-proxy's rules are proven. kube-proxy starts its metrics server
	// before its first sync (cmd/kube-proxy/app/server.go), so the kube-
	// proxy that wrote them already listens; the grace covers rules a
	// previous kube-proxy left while RKE2's restart starts the next one.
	// Waiting longer could only wait out --wait for a server that is off.
	proxyModeGrace = 10 * time.Second
	// proxyModeMaxBody is more than any mode name; a longer answer is not
	// kube-proxy's.
	proxyModeMaxBody = 64
)

// proxyModes are the answers kube-proxy gives on Linux.
var proxyModes = []string{"iptables", "nftables", "ipvs"}

// CheckProxyModeURL accepts only a plain http URL of /proxyMode on a
// loopback address or one of this node's own addresses: kube-proxy's
// metrics server on this node (kube-proxy can bind nothing else). Anything
// else would let a config or a flag send verify's request off the node.
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
	if err := CheckProxyModeURL(opts.ProxyModeURL); err != nil {
		return proxyModeCheck{note: "proxy mode not checked: " + err.Error()}
	}
	from := ""
	if opts.ProxyModeSource != "" {
		from = " (from " + opts.ProxyModeSource + ")"
	}
	if grace := opts.Now().Add(proxyModeGrace); synced && grace.Before(deadline) {
		deadline = grace
	}
	client := loopbackClient(proxyModeTimeout)
	for {
		c, err := askProxyMode(ctx, client, opts.ProxyModeURL)
		if err == nil {
			return c
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

// loopbackClient is the client for kube-proxy's metrics server: no proxy
// from the environment, no connection kept, no redirect followed, so the
// request stays on this node, to this port (CheckProxyModeURL holds the
// URL to loopback).
func loopbackClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// askProxyMode makes one request. err is set only when no HTTP answer came.
func askProxyMode(ctx context.Context, client *http.Client, target string) (proxyModeCheck, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return proxyModeCheck{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return proxyModeCheck{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, proxyModeMaxBody+1))
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return proxyModeCheck{problem: fmt.Sprintf("%s answered %s with a redirect (to %q); kube-proxy never redirects, so something else answers there", target, resp.Status, resp.Header.Get("Location"))}, nil
	case resp.StatusCode != http.StatusOK:
		return proxyModeCheck{problem: fmt.Sprintf("%s answered %s, not kube-proxy's mode", target, resp.Status)}, nil
	case err != nil:
		return proxyModeCheck{problem: fmt.Sprintf("%s: reading the answer: %v", target, err)}, nil
	case len(body) > proxyModeMaxBody:
		return proxyModeCheck{problem: fmt.Sprintf("%s answered more than %d bytes, not a kube-proxy mode", target, proxyModeMaxBody)}, nil
	}
	mode := strings.TrimSpace(string(body))
	for _, m := range proxyModes {
		if mode == m {
			return proxyModeCheck{mode: mode}, nil
		}
	}
	return proxyModeCheck{problem: fmt.Sprintf("%s answered %q, which is not a kube-proxy mode (%s)", target, mode, strings.Join(proxyModes, ", "))}, nil
}
