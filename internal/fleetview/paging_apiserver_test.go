package fleetview

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
)

// pagingNodes is how many Nodes the paging test creates
// (FLEETVIEW_PAGING_NODES raises it: 5000 is the size the issue saw fail).
func pagingNodes(t *testing.T) int {
	n := 2000
	if v := os.Getenv("FLEETVIEW_PAGING_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("FLEETVIEW_PAGING_NODES=%q: want a number of at least 1000", v)
		}
	}
	return n
}

// The plugin over a slow link to a real API server holding thousands of
// Nodes of a real Node's size (about 9 kB: an incompressible annotation
// stands in for the images and conditions): the link is throttled so the
// whole list takes about 45s, over the 30s one unpaged GET had, which
// fails as the plugin's old single request did; the plugin lists every
// Node in pages of 500, each well within its own limit.
func TestPluginPagesOverASlowLink(t *testing.T) {
	api := apiserver.Start(t)
	n := pagingNodes(t)
	admin := adminClient(t, api)
	start := time.Now()
	createNodes(t, admin, api.URL, n, 9000)
	t.Logf("created %d Nodes in %s", n, time.Since(start).Round(time.Second))

	// The whole list's size on the wire (gzip, as Go's client asks for).
	whole := wireBytes(t, admin, api.URL+"/api/v1/nodes")
	rate := whole / 45
	link := throttle(t, strings.TrimPrefix(api.URL, "https://"), rate)
	kubeconfig := kubeconfigVia(t, api, "https://"+link.addr)
	t.Logf("the whole NodeList is %d bytes on the wire; the link carries %d bytes/s", whole, rate)

	// The old plugin: one GET of every Node, 30s for all of it.
	creds, err := kubeapi.Load(hostfs.New("/"), kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	old, err := kubeapi.New(creds, kubeapi.Options{Timeout: 30 * time.Second, MaxBody: 256 << 20, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := old.Get(context.Background(), "/api/v1/nodes"); err == nil {
		t.Fatalf("one unpaged GET of %d Nodes at %d bytes/s took %s and worked: the link is not slow enough to show anything", n, rate, time.Since(start))
	} else {
		t.Logf("one unpaged GET, 30s for the whole list (the old plugin's request): failed after %s: %v", time.Since(start).Round(time.Second), err)
	}

	link.sent.Store(0)
	var out, errb strings.Builder
	env := Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": kubeconfig}[k] }, Stdout: &out, Stderr: &errb, Now: time.Now}
	start = time.Now()
	if code := Run(context.Background(), []string{"-o", "json"}, env, Connect); code != ExitOK {
		t.Fatalf("exit %d after %s: %s", code, time.Since(start).Round(time.Second), errb.String())
	}
	took := time.Since(start)
	if got := strings.Count(out.String(), `"node": "`); got != n {
		t.Fatalf("listed %d nodes, want %d", got, n)
	}
	t.Logf("kubectl proxy-backend listed %d Nodes in %s, %d bytes through the link (%d bytes/s), in pages of %d",
		n, took.Round(time.Second), link.sent.Load(), rate, PageSize)
}

// adminClient is an HTTP client with the API server's admin credentials.
func adminClient(t *testing.T, api *apiserver.Server) *http.Client {
	t.Helper()
	creds, err := kubeapi.Load(hostfs.New("/"), api.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(creds.Cert, creds.Key)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(creds.CA)
	return &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 8,
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
}

// createNodes creates n Nodes, 8 at a time, each with size bytes of
// random hex in an annotation.
func createNodes(t *testing.T, c *http.Client, server string, n, size int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pad := make([]byte, size/2)
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				rand.Read(pad)
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%05d","labels":{"rke2-proxy-backend/backend":"iptables-nft"},"annotations":{"example.test/padding":%q}}}`,
					i, hex.EncodeToString(pad))
				resp, err := c.Post(server+"/api/v1/nodes", "application/json", bytes.NewReader([]byte(body)))
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						err = fmt.Errorf("POST node-%05d: %s", i, resp.Status)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// wireBytes is how many bytes GET url sends, compressed as Go's client
// asks for it.
func wireBytes(t *testing.T, c *http.Client, url string) int64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	size, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return size
}

// link is a TCP proxy to the API server whose answers flow at most rate
// bytes per second per connection: a slow WAN link.
type link struct {
	addr string
	sent atomic.Int64
}

func throttle(t *testing.T, upstream string, rate int64) *link {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	lk := &link{addr: l.Addr().String()}
	go func() {
		for {
			down, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				down.Close()
				continue
			}
			go func() { io.Copy(up, down); up.Close() }()
			go func() { lk.slowCopy(down, up, rate); down.Close() }()
		}
	}()
	return lk
}

// slowCopy copies in 16 kB steps, sleeping so that the bytes sent never
// run ahead of rate.
func (lk *link) slowCopy(dst io.Writer, src io.Reader, rate int64) {
	buf := make([]byte, 16<<10)
	start, sent := time.Now(), int64(0)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
			sent += int64(k)
			lk.sent.Add(int64(k))
			if ahead := time.Duration(float64(sent)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		if err != nil {
			return
		}
	}
}

// kubeconfigVia is the admin kubeconfig with its server moved to server.
func kubeconfigVia(t *testing.T, api *apiserver.Server, server string) string {
	t.Helper()
	b, err := os.ReadFile(api.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(f, bytes.Replace(b, []byte("server: "+api.URL), []byte("server: "+server), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
