package verify

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
)

// Verify reads the figures from the /metrics beside /proxyMode; a page
// that is missing, not kube-proxy's, garbled or too big is a note and
// never changes the verdict. kube-proxy's real page passes read at the
// time it was written (2s after its last queued sync: a frozen page read
// later shows a change that never synced).
func TestVerifyRecordsKubeProxyFigures(t *testing.T) {
	page, err := os.ReadFile("../kubeproxy/testdata/kube-proxy-v1.37-nftables-metrics.prom") // kube-proxy's real page (see the kubeproxy tests)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		metrics http.HandlerFunc
		note    string // "" means the figures are recorded
	}{
		{"kube-proxy's page", func(w http.ResponseWriter, r *http.Request) { w.Write(page) }, ""},
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "answered 404"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>{{oops\n")) }, "not a Prometheus text exposition"},
		{"someone else's metrics", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("go_goroutines 7\n")) }, "not kube-proxy's metrics"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://192.0.2.1/metrics", http.StatusFound)
		}, "answered 302"},
		{"too big", func(w http.ResponseWriter, r *http.Request) {
			line := []byte("# " + strings.Repeat("x", 1022) + "\n")
			for range kubeproxy.MetricsMaxBody/len(line) + 2 {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		}, "more than 4194304 bytes"},
	}
	fake := healthyFake(t, backend.NFTables)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("nftables")) })
			mux.HandleFunc("/metrics", c.metrics)
			srv := serve(t, mux.ServeHTTP)
			clock := &fakeClock{now: time.Unix(1796061252, 0)}
			res := run(t, clock.on(Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: srv.URL + "/proxyMode"}))
			if res.Verdict != VerdictOK || len(res.Findings) != 0 {
				t.Fatalf("verdict %s findings %v: the figures must never fail verify", res.Verdict, res.Findings)
			}
			notes := strings.Join(res.Notes, "\n")
			if c.note == "" {
				if res.KubeProxy == nil || len(res.KubeProxy.Syncs) != 4 || strings.Contains(notes, "sync figures") {
					t.Fatalf("figures %+v notes %q, want kube-proxy's figures", res.KubeProxy, notes)
				}
				return
			}
			if res.KubeProxy != nil || !strings.Contains(notes, "kube-proxy's sync figures not read") || !strings.Contains(notes, c.note) {
				t.Errorf("figures %+v notes %q, want none and a note with %q", res.KubeProxy, notes, c.note)
			}
		})
	}
}

func TestKubeProxyFiguresTimeOut(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, notes := kubeProxyFiguresOrNote(ctx, srv.URL+"/proxyMode", nil); len(notes) != 1 || !strings.Contains(notes[0], "unreachable") {
		t.Errorf("notes %q, want one saying /metrics is unreachable", notes)
	}
}
