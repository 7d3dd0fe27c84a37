package kubeapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/sleep"
)

// Patch types the API server takes (Content-Type of a PATCH).
const (
	// StrategicMerge merges list items by their merge key: a Node's
	// status.conditions by type, so one condition is set and the
	// kubelet's others stay.
	StrategicMerge = "application/strategic-merge-patch+json"
	// MergePatch is RFC 7386: a map's keys are set one by one, so an
	// annotation is set and every other stays.
	MergePatch = "application/merge-patch+json"
)

// Options bound a client. Zero fields take the defaults below.
type Options struct {
	Timeout  time.Duration // one request, connect to last byte (default 5s)
	MaxBody  int64         // the most of a response read (default 1 MiB)
	Attempts int           // tries per call, the first included (default 3)
	Backoff  time.Duration // before the second try, doubled each time (default 500ms)
	// Interval is the least time between two requests (default 200ms): a
	// loop that goes wrong still cannot flood the API server.
	Interval time.Duration
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
}

// Client talks to one API server with one identity.
type Client struct {
	creds Credentials
	base  string // the server's URL without a trailing slash: base+path is a request's URL
	opts  Options
	http  *http.Client
	mu    sync.Mutex
	next  time.Time // the earliest the next request may go
}

// New makes a client for creds.
func New(creds Credentials, o Options) (*Client, error) {
	o.defaults()
	base, err := BaseURL(creds.Server)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", creds.File, err)
	}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12}
	if creds.CA != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(creds.CA) {
			return nil, fmt.Errorf("kubeconfig %s: certificate-authority holds no PEM certificate", creds.File)
		}
		tlsc.RootCAs = pool
	}
	if creds.Cert != nil {
		pair, err := tls.X509KeyPair(creds.Cert, creds.Key)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: client-certificate and client-key: %w", creds.File, err)
		}
		tlsc.Certificates = []tls.Certificate{pair}
	}
	tr := &http.Transport{TLSClientConfig: tlsc, Proxy: nil, TLSHandshakeTimeout: o.Timeout,
		ResponseHeaderTimeout: o.Timeout, MaxIdleConns: 1, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: o.Timeout, CheckRedirect: refuseRedirect}
	return &Client{creds: creds, base: base, opts: o, http: hc}, nil
}

// BaseURL is server (a kubeconfig's cluster.server) as the prefix of every
// request's URL: an https URL with a host, its path kept (Rancher's
// kubeconfigs point at https://rancher/k8s/clusters/c-xyz, a proxy that
// serves the API below that path) and its trailing slashes cut, so
// "https://host:6443/" + "/api/v1/nodes" is not "//api/v1/nodes", which the
// API server answers 404.
func BaseURL(server string) (string, error) {
	u, err := url.Parse(server)
	switch {
	case err != nil:
		return "", fmt.Errorf("cluster.server %q: not a URL: %w", server, err)
	case u.Scheme != "https":
		return "", fmt.Errorf("cluster.server %q: only https:// servers are supported (a node's credentials are a client certificate over TLS)", server)
	case u.Host == "":
		return "", fmt.Errorf("cluster.server %q: no host", server)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("cluster.server %q: a server URL is scheme, host and an optional path; remove the user, query or fragment", server)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// refuseRedirect makes a 3xx the answer instead of a new request: Go's
// client would follow a 302 to a PATCH with a GET, and the GET's 200 would
// count as the write that never happened. The API server never redirects
// its own API; a redirect is a proxy or a wrong server URL, which the
// operator must hear about.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// StatusError is an answer of the API server other than 2xx, with its
// metav1.Status reason and message when it sent one.
type StatusError struct {
	Method, Path string
	Code         int
	Reason       string
	Message      string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, msg)
}

// IsForbidden says err is the API server refusing the identity (RBAC,
// the Node authorizer, NodeRestriction): retrying cannot help.
func IsForbidden(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusForbidden
}

// Get returns the body of GET path (e.g. /api/v1/nodes/NAME).
func (c *Client) Get(ctx context.Context, path string) ([]byte, error) {
	return c.call(ctx, http.MethodGet, path, "", nil)
}

// Patch sends body as a PATCH of kind (StrategicMerge or MergePatch) and
// returns the object the server now holds.
func (c *Client) Patch(ctx context.Context, path, kind string, body []byte) ([]byte, error) {
	return c.call(ctx, http.MethodPatch, path, kind, body)
}

// call tries up to Attempts times: again after a transport error, a 429
// or a 5xx (honouring Retry-After up to eight backoffs), never after
// another answer, which would only come again.
func (c *Client) call(ctx context.Context, method, path, kind string, body []byte) ([]byte, error) {
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		out, retryAfter, err := c.once(ctx, method, path, kind, body)
		if err == nil {
			return out, nil
		}
		if !retriable(err) || attempt == c.opts.Attempts || ctx.Err() != nil {
			return nil, fmt.Errorf("API server %s (credentials %s): %w", c.creds.Server, c.creds.File, err)
		}
		if retryAfter > wait {
			wait = min(retryAfter, 8*c.opts.Backoff)
		}
		if err := sleep.Ctx(ctx, wait); err != nil {
			return nil, fmt.Errorf("API server %s: %w", c.creds.Server, err)
		}
		wait *= 2
	}
}

func retriable(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return true // the connection: refused, reset, timed out
	}
	return se.Code == http.StatusTooManyRequests || se.Code >= 500
}

// once is one request, after the rate limit's wait.
func (c *Client) once(ctx context.Context, method, path, kind string, body []byte) ([]byte, time.Duration, error) {
	if err := c.pace(ctx); err != nil {
		return nil, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "rke2-proxy-backend")
	if kind != "" {
		req.Header.Set("Content-Type", kind)
	}
	if c.creds.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.creds.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBody+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if int64(len(out)) > c.opts.MaxBody {
		return nil, 0, &StatusError{Method: method, Path: path, Code: resp.StatusCode, Reason: "TooLarge",
			Message: fmt.Sprintf("the answer is over %d bytes, the most this request reads", c.opts.MaxBody)}
	}
	if resp.StatusCode/100 == 2 {
		return out, 0, nil
	}
	se := &StatusError{Method: method, Path: path, Code: resp.StatusCode}
	var status struct{ Reason, Message string }
	if json.Unmarshal(out, &status) == nil {
		se.Reason, se.Message = status.Reason, status.Message
	}
	if resp.StatusCode/100 == 3 {
		se.Reason = "Redirect"
		se.Message = fmt.Sprintf("the server redirects to %q, and redirects are not followed (a %s would be re-sent as a GET, or to another server): point the kubeconfig's cluster.server at the API server itself",
			resp.Header.Get("Location"), method)
	}
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return nil, time.Duration(secs) * time.Second, se
}

// pace waits until Interval has passed since the last request went.
func (c *Client) pace(ctx context.Context) error {
	c.mu.Lock()
	now := time.Now()
	at := c.next
	if at.Before(now) {
		at = now
	}
	c.next = at.Add(c.opts.Interval)
	c.mu.Unlock()
	return sleep.Ctx(ctx, at.Sub(now))
}
