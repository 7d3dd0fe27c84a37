package kubeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
)

// A server that answers a PATCH with 302 (a proxy in front of the API
// server, a wrong server URL) gets an error naming the redirect, once:
// Go's client would have re-sent the write as a GET to the Location,
// whose 200 the publisher took for a write that never happened. A GET is
// not followed either.
func TestRedirectIsRefused(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/elsewhere" {
			w.Write([]byte(`{"kind":"Node"}`))
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c, err := New(Credentials{File: "kc", Server: srv.URL, Token: "t", CA: pemOf(srv.Certificate())}, Options{Interval: time.Millisecond, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Patch(context.Background(), "/api/v1/nodes/a/status", StrategicMerge, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "302") || !strings.Contains(err.Error(), `redirects to "/elsewhere"`) {
		t.Errorf("PATCH answered 302: %v; want an error naming the redirect", err)
	}
	if _, err := c.Get(context.Background(), "/api/v1/nodes/a"); err == nil {
		t.Error("GET answered 302: no error; want the redirect refused")
	}
	if want := "PATCH /api/v1/nodes/a/status,GET /api/v1/nodes/a"; strings.Join(asked, ",") != want {
		t.Errorf("the server saw %v; want %s (no request to the Location, no retry)", asked, want)
	}
}

// kubectl takes a server URL with a trailing slash, and one with a path
// (Rancher's https://rancher/k8s/clusters/c-xyz): so does the client,
// against a real API server directly and behind a proxy serving it below
// a path, as Rancher's does.
func TestServerURLForms(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	creds, err := Load(hostfs.New("/"), api.NodeKubeconfig("node-a"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(creds Credentials) error {
		c, err := New(creds, Options{Interval: time.Millisecond, Attempts: 1})
		if err == nil {
			_, err = c.Get(context.Background(), "/api/v1/nodes/node-a")
		}
		return err
	}
	slash := creds
	slash.Server += "/"
	if err := get(slash); err != nil {
		t.Errorf("server %s: %v", slash.Server, err)
	}

	// The proxy holds the API server's admin credentials, as Rancher's
	// does for its users, and strips its prefix.
	const prefix = "/k8s/clusters/c-xyz"
	target, _ := url.Parse(api.URL)
	admin, err := Load(hostfs.New("/"), api.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(admin.Cert, admin.Key)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(admin.CA)
	var seen []string
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			seen = append(seen, r.In.URL.Path)
			r.SetURL(target)
			r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, prefix)
			r.Out.URL.RawPath = ""
		},
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}},
	}
	front := httptest.NewTLSServer(proxy)
	defer front.Close()
	for _, server := range []string{front.URL + prefix, front.URL + prefix + "/"} {
		seen = nil
		if err := get(Credentials{File: "rancher.kubeconfig", Server: server, Token: "t", CA: pemOf(front.Certificate())}); err != nil {
			t.Errorf("server %s: %v", server, err)
		}
		if len(seen) != 1 || seen[0] != prefix+"/api/v1/nodes/node-a" {
			t.Errorf("server %s: the proxy saw %v; want %s/api/v1/nodes/node-a", server, seen, prefix)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h:6443":             "https://h:6443",
		"https://h:6443/":            "https://h:6443",
		"https://h/k8s/clusters/c":   "https://h/k8s/clusters/c",
		"https://h/k8s/clusters/c//": "https://h/k8s/clusters/c",
		"http://h":                   "only https://",
		"https://":                   "no host",
		"https://u:p@h":              "remove the user",
		"https://h/?a=b":             "remove the user, query",
		"https://h/#x":               "remove the user, query or fragment",
		"https://h:6443/%zz":         "not a URL",
	} {
		got, err := BaseURL(in)
		if err != nil {
			got = err.Error()
		}
		if ok := strings.HasPrefix(want, "https://"); (ok && got != want) || (!ok && !strings.Contains(got, want)) {
			t.Errorf("BaseURL(%q) = %q; want %q", in, got, want)
		}
	}
}

func pemOf(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}
