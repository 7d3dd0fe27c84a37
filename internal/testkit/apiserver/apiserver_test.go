package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeRestriction checks the server is the one the tool's credentials
// meet on an RKE2 node: a node's certificate may patch its own Node's
// status and metadata, and the NodeRestriction admission plugin refuses
// it another node's, which survives a restart on the same data.
func TestNodeRestriction(t *testing.T) {
	s := Start(t)
	s.RegisterNode("node-a")
	s.RegisterNode("node-b")
	s.NodeKubeconfig("node-a")
	a := s.nodeClient(t, "node-a")
	patch := `{"metadata":{"annotations":{"example.test/x":"1"}}}`
	if code, body := send(t, a, http.MethodPatch, s.URL+"/api/v1/nodes/node-a", patch); code != http.StatusOK {
		t.Fatalf("node-a patching its own Node: %d %s", code, body)
	}
	code, body := send(t, a, http.MethodPatch, s.URL+"/api/v1/nodes/node-b", patch)
	if code != http.StatusForbidden || !strings.Contains(body, "node-a") {
		t.Fatalf("node-a patching node-b: %d %s, want 403 from NodeRestriction", code, body)
	}
	s.Stop()
	s.Restart()
	code, out := s.Do(http.MethodGet, "/api/v1/nodes/node-a", "", nil)
	if code != http.StatusOK || !strings.Contains(string(out), `"example.test/x":"1"`) {
		t.Fatalf("after a restart on the same data, node-a is %d %s", code, out)
	}
}

// nodeClient is an HTTP client with the certificate NodeKubeconfig wrote.
func (s *Server) nodeClient(t *testing.T, name string) *http.Client {
	dir := filepath.Join(s.dir, "node-"+name)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "client-kubelet.crt"), filepath.Join(dir, "client-kubelet.key"))
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(s.ca.path)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
}

func send(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
