package verify

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Whatever answers on kube-proxy's port must say a mode; an error, a
// redirect or anything else is a finding, never a skipped check.
func TestProxyModeAnswers(t *testing.T) {
	var elsewhere atomic.Int32
	other := serve(t, func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1); w.Write([]byte("nftables")) })
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string // finding kinds
		mode    string
		message string
	}{
		{"the plan's mode", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("nftables\n")) }, "", "nftables", ""},
		{"another mode", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("iptables")) }, "proxy-mode@nftables", "iptables", `reports proxy mode "iptables"`},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, "proxy-mode@nftables", "", "answered 500 Internal Server Error"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/proxyMode", http.StatusFound)
		}, "proxy-mode@nftables", "", "with a redirect"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) }, "proxy-mode@nftables", "", `answered "<html>hello</html>", which is not a kube-proxy mode`},
		{"endless body", func(w http.ResponseWriter, r *http.Request) {
			for range 1 << 12 {
				if _, err := w.Write([]byte(strings.Repeat("nftables", 128))); err != nil {
					return
				}
			}
		}, "proxy-mode@nftables", "", "more than 64 bytes"},
	}
	fake := healthyFake(t, backend.NFTables)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := serve(t, c.handler)
			res := run(t, Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: srv.URL + "/proxyMode"})
			if kinds(res) != c.want || res.ProxyMode != c.mode {
				t.Fatalf("findings %q mode %q, want %q mode %q; notes %q", kinds(res), res.ProxyMode, c.want, c.mode, res.Notes)
			}
			if c.want != "" && (res.Verdict != VerdictFailed || !strings.Contains(res.Findings[0].Message, c.message)) {
				t.Errorf("verdict %s, finding %q; want failed with %q", res.Verdict, res.Findings[0].Message, c.message)
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed %d time(s)", n)
	}
}

// A refused connection while verify may still wait is kube-proxy not up
// yet: verify asks again; at the deadline it skips the check with a note.
func TestProxyModeWaitsForKubeProxy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens now: connections are refused
	fake := healthyFake(t, backend.NFTables)
	url := "http://" + addr + "/proxyMode"

	res := run(t, Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: url})
	if !res.OK || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "nothing listens on") {
		t.Errorf("no wait, nothing listening: ok=%v notes %q; want ok with a note", res.OK, res.Notes)
	}

	sleeps := 0
	var srv *http.Server
	t.Cleanup(func() {
		if srv != nil {
			srv.Close()
		}
	})
	res = run(t, Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: url, Wait: time.Hour, Poll: time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if sleeps++; sleeps == 2 {
				l, err := net.Listen("tcp", addr)
				if err != nil {
					return err
				}
				srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("iptables")) })}
				go srv.Serve(l)
			}
			return nil
		}})
	if res.ProxyMode != "iptables" || kinds(res) != "proxy-mode@nftables" || sleeps != 2 {
		t.Errorf("kube-proxy up after 2 polls: mode %q findings %q after %d sleeps", res.ProxyMode, kinds(res), sleeps)
	}
}

// Once the rules are proven, a refusing endpoint is asked for at most
// proxyModeGrace, by verify's own clock, and then noted: never all of
// --wait (issue 19 item 5: switch --timeout 90s waited 90s for it twice).
func TestProxyModeRefusedAfterTheRulesAreProven(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/proxyMode"
	l.Close()
	fake := healthyFake(t, backend.NFTables)
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	start := now
	res := run(t, Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: url, ProxyModeSource: "metrics-bind-address=127.0.0.9:1 in /etc/rancher/rke2/config.yaml",
		Wait: 10 * time.Minute, Poll: time.Second,
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }})
	if waited := now.Sub(start); waited > proxyModeGrace {
		t.Errorf("waited %s for a refusing endpoint after the rules were proven; want at most %s", waited, proxyModeGrace)
	}
	if !res.OK || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "although kube-proxy's rules are complete") ||
		!strings.Contains(res.Notes[0], "(from metrics-bind-address=127.0.0.9:1 in /etc/rancher/rke2/config.yaml)") {
		t.Errorf("ok=%v notes %q; want ok with a note naming the address's source", res.OK, res.Notes)
	}
}
