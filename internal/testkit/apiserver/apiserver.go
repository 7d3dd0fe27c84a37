// Package apiserver runs Kubernetes' real kube-apiserver (with an embedded
// etcd: test/kubeproxy/apiserver, built by the oracle's cached-build
// machinery) for a test: its own CA, serving certificate, admin
// credentials, Node and RBAC authorization and the NodeRestriction
// admission plugin, so what a node's credentials may do is what a real
// cluster lets them do.
package apiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
)

// startWait bounds how long a start waits for /readyz: a cold start
// bootstraps RBAC's roles and the priority levels, seconds on an idle
// machine, much longer on two busy cores.
const startWait = 3 * time.Minute

// Server is one running API server (or, between Stop and Restart, one
// stopped server whose data and certificates remain).
type Server struct {
	t     testing.TB
	bin   string
	dir   string // the test's temp dir: pki, etcd data, log
	URL   string // https://127.0.0.1:PORT
	port  int
	ca    *ca
	admin *http.Client
	// AdminKubeconfig is a kubeconfig of a cluster admin (group
	// system:masters), for kubectl and for tests' own setup.
	AdminKubeconfig string
	cmd             *exec.Cmd
	exited          chan struct{}
	log             string
	starts          int
}

// Start builds (once, cached) and starts an API server for t and stops it
// when t ends; its log is attached to t's output when t fails.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, bin: oracle.APIServer(t), dir: t.TempDir()}
	if err := s.prepare(); err != nil {
		t.Fatalf("apiserver: preparing %s: %v", s.dir, err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			s.attachLog()
		}
	})
	s.Restart()
	return s
}

func (s *Server) prepare() error {
	pki := filepath.Join(s.dir, "pki")
	if err := os.Mkdir(pki, 0o700); err != nil {
		return err
	}
	var err error
	if s.ca, err = newCA(pki); err != nil {
		return err
	}
	if _, _, err := s.ca.issue(pki, "serving", "kube-apiserver", nil, true); err != nil {
		return err
	}
	if err := newSigningKey(filepath.Join(pki, "service-account.key")); err != nil {
		return err
	}
	if s.port, err = freePort(); err != nil {
		return err
	}
	s.URL = "https://127.0.0.1:" + strconv.Itoa(s.port)
	cert, key, err := s.ca.issue(pki, "admin", "test-admin", []string{"system:masters"}, false)
	if err != nil {
		return err
	}
	if s.AdminKubeconfig, err = s.writeKubeconfig("admin", cert, key); err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(s.ca.cert)
	s.admin = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}},
	}}
	return nil
}

func (s *Server) args() []string {
	pki := filepath.Join(s.dir, "pki")
	return []string{
		"--etcd-data", filepath.Join(s.dir, "etcd"),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The kubernetes Service's endpoint would be this loopback
		// address, which the reconciler refuses; no test uses it.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(s.port),
		"--cert-dir=" + pki,
		"--tls-cert-file=" + filepath.Join(pki, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "serving.key"),
		"--client-ca-file=" + s.ca.path,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(pki, "service-account.key"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "service-account.key"),
		"--service-cluster-ip-range=10.43.0.0/16",
		"--anonymous-auth=false",
		"--profiling=false",
	}
}

// Restart starts the server: the first time from Start, later on the
// same port, certificates and etcd data after Stop (the API server coming
// back after an outage, with the objects it had).
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatalf("apiserver: Restart while pid %d runs (Stop it first)", s.cmd.Process.Pid)
	}
	s.starts++
	s.log = filepath.Join(s.dir, fmt.Sprintf("apiserver.%d.log", s.starts))
	logf, err := os.Create(s.log)
	if err != nil {
		s.t.Fatalf("apiserver: %v", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("apiserver: starting %s: %v", s.bin, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.exited)
	start := time.Now()
	if err := s.waitReady(); err != nil {
		s.Stop()
		s.attachLog()
		s.t.Fatalf("apiserver: %v", err)
	}
	s.t.Logf("apiserver: %s ready in %s (pid %d)", s.URL, time.Since(start).Round(time.Millisecond), cmd.Process.Pid)
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(startWait)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("exited before it was ready (%s)", s.cmd.ProcessState)
		case <-time.After(250 * time.Millisecond):
		}
		code, body, err := s.do(http.MethodGet, "/readyz", "", nil)
		if err == nil && code == http.StatusOK {
			return nil
		}
		last = fmt.Sprintf("%d %s %v", code, firstLine(body), err)
	}
	return fmt.Errorf("not ready after %s (last /readyz: %s)", startWait, last)
}

// Stop ends the server by its PID (SIGTERM, then SIGKILL after 15s) and
// waits for it; its data stays for Restart.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

func (s *Server) attachLog() {
	b, err := os.ReadFile(s.log)
	if err != nil {
		s.t.Logf("apiserver: no log: %v", err)
		return
	}
	const tail = 16 << 10
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	s.t.Logf("apiserver: the last of %s:\n%s", s.log, b)
}

// Do sends one request as the cluster admin and returns the status and
// body; a transport error fails the test.
func (s *Server) Do(method, path, contentType string, body []byte) (int, []byte) {
	s.t.Helper()
	code, out, err := s.do(method, path, contentType, body)
	if err != nil {
		s.t.Fatalf("apiserver: %s %s: %v", method, path, err)
	}
	return code, out
}

func (s *Server) do(method, path, contentType string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.admin.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, out, err
}

// RegisterNode creates the Node name, as a kubelet does when it joins.
func (s *Server) RegisterNode(name string) {
	s.t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,"labels":{"kubernetes.io/hostname":%q}}}`, name, name)
	if code, out := s.Do(http.MethodPost, "/api/v1/nodes", "application/json", []byte(body)); code != http.StatusCreated {
		s.t.Fatalf("apiserver: registering node %s: %d %s", name, code, out)
	}
}

// NodeKubeconfig writes credentials shaped like an RKE2 node's
// kubelet.kubeconfig (/var/lib/rancher/rke2/agent/kubelet.kubeconfig: the
// server, the CA file, and a client certificate and key file for
// CN=system:node:NAME, O=system:nodes) and returns its path.
func (s *Server) NodeKubeconfig(name string) string {
	s.t.Helper()
	dir := filepath.Join(s.dir, "node-"+name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	cert, key, err := s.ca.issue(dir, "client-kubelet", "system:node:"+name, []string{"system:nodes"}, false)
	if err == nil {
		var path string
		if path, err = s.writeKubeconfig(filepath.Join("node-"+name, "kubelet"), cert, key); err == nil {
			return path
		}
	}
	s.t.Fatalf("apiserver: node %s's kubeconfig: %v", name, err)
	return ""
}

// InstallRKE2Agent lays out node name's credentials under root (a fixture
// host's directory) as RKE2's agent does under its data-dir: the server
// CA, client-kubelet.crt/.key and a kubelet.kubeconfig naming them by
// their host paths, so a tool run with --root finds them where it looks
// on a node.
func (s *Server) InstallRKE2Agent(root, name string) {
	s.t.Helper()
	s.InstallRKE2AgentAs(root, name, "system:node:"+name, "system:nodes")
}

// InstallRKE2AgentAs is InstallRKE2Agent with a client certificate for
// CN=cn, O=orgs: credentials RKE2 would not write, such as a node's name
// outside the system:nodes group, which neither the Node authorizer nor
// RBAC grants anything.
func (s *Server) InstallRKE2AgentAs(root, name, cn string, orgs ...string) {
	s.t.Helper()
	agent := path.Join(hostfs.RKE2DataDir, "agent")
	dir := filepath.Join(root, agent)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	cert, key, err := s.ca.issue(dir, "client-kubelet", cn, orgs, false)
	if err == nil {
		var ca []byte
		if ca, err = os.ReadFile(s.ca.path); err == nil {
			err = os.WriteFile(filepath.Join(dir, "server-ca.crt"), ca, 0o600)
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "kubelet.kubeconfig"),
			[]byte(RKE2Kubeconfig(s.URL, agent+"/server-ca.crt", agent+"/"+filepath.Base(cert), agent+"/"+filepath.Base(key))), 0o600)
	}
	if err != nil {
		s.t.Fatalf("apiserver: node %s's RKE2 agent credentials under %s: %v", name, root, err)
	}
}

// CreatePod creates pod name in namespace ns (created when missing, with
// its default ServiceAccount, which no controller makes here), bound to
// node (spec.nodeName: the scheduler's work done; no kubelet runs it),
// with annotations, and returns its UID.
func (s *Server) CreatePod(ns, name, node string, annotations map[string]string) string {
	s.t.Helper()
	for _, obj := range []struct{ path, body string }{
		{"/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)},
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`},
	} {
		if code, out := s.Do(http.MethodPost, obj.path, "application/json", []byte(obj.body)); code != http.StatusCreated && code != http.StatusConflict {
			s.t.Fatalf("apiserver: POST %s: %d %s", obj.path, code, out)
		}
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec": map[string]any{"nodeName": node, "automountServiceAccountToken": false,
			"containers": []any{map[string]any{"name": "c", "image": "registry.invalid/sleep"}}}}
	body, _ := json.Marshal(pod)
	code, out := s.Do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", "application/json", body)
	var made struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	if code != http.StatusCreated || json.Unmarshal(out, &made) != nil || made.Metadata.UID == "" {
		s.t.Fatalf("apiserver: creating pod %s/%s on %s: %d %s", ns, name, node, code, out)
	}
	return made.Metadata.UID
}

// writeKubeconfig writes name.kubeconfig under the server's dir in the
// layout RKE2's agent writes (file paths, not inline data).
func (s *Server) writeKubeconfig(name, cert, key string) (string, error) {
	path := filepath.Join(s.dir, name+".kubeconfig")
	return path, os.WriteFile(path, []byte(RKE2Kubeconfig(s.URL, s.ca.path, cert, key)), 0o600)
}

// kubeconfigText is a kubeconfig in the layout of RKE2's agent's
// kubelet.kubeconfig (file paths, not inline data).
func RKE2Kubeconfig(server, ca, cert, key string) string {
	return fmt.Sprintf(`apiVersion: v1
clusters:
- cluster:
    server: %s
    certificate-authority: %s
  name: local
contexts:
- context:
    cluster: local
    namespace: default
    user: user
  name: Default
current-context: Default
kind: Config
preferences: {}
users:
- name: user
  user:
    client-certificate: %s
    client-key: %s
`, server, ca, cert, key)
}

// RefusedAddr is a loopback host:port where nothing listens (it was free
// a moment ago), for a client's view of an API server that is gone.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// freePort picks a free loopback port below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range). A port from that range (":0") can be
// taken, while the server is stopped for Restart, as the local port of any
// outgoing connection on the machine, and the server then cannot bind it
// again (seen in CI: "bind: address already in use"); below the range only
// another listener can take it.
func freePort() (int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	var last error
	for range 100 {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port, nil
		}
		last = err
	}
	return 0, fmt.Errorf("picking a loopback port below %d: %w", low, last)
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}
