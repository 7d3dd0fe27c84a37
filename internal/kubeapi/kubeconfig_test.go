package kubeapi

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const kubeconfigFile = "/var/lib/rancher/rke2/agent/kubelet.kubeconfig"

// rke2Kubeconfig is RKE2's agent's kubelet.kubeconfig (the test kit's
// copy of its layout), its cluster's and user's entries replaced.
func rke2Kubeconfig(cluster, user string) string {
	const ca, cert, key = "/ca", "/cert", "/key"
	text := apiserver.RKE2Kubeconfig("https://server", ca, cert, key)
	text = strings.Replace(text, "    server: https://server\n    certificate-authority: "+ca, cluster, 1)
	return strings.Replace(text, "    client-certificate: "+cert+"\n    client-key: "+key, user, 1)
}

const (
	rke2Cluster = "    server: https://127.0.0.1:6443\n    certificate-authority: /var/lib/rancher/rke2/agent/server-ca.crt"
	rke2User    = "    client-certificate: /var/lib/rancher/rke2/agent/client-kubelet.crt\n    client-key: client-kubelet.key"
)

func agentHost(t *testing.T, kubeconfig string) hostfs.Root {
	return testhost.New(t).
		File(kubeconfigFile, kubeconfig).
		File("/var/lib/rancher/rke2/agent/server-ca.crt", "CA").
		File("/var/lib/rancher/rke2/agent/client-kubelet.crt", "CERT").
		File("/var/lib/rancher/rke2/agent/client-kubelet.key", "KEY").
		File("/var/lib/rancher/rke2/agent/token", "  secret-token\n").
		Root()
}

// RKE2's layout loads: absolute paths under --root, a relative one
// beside the kubeconfig, inline data, and a token file.
func TestLoadRKE2Layout(t *testing.T) {
	root := agentHost(t, rke2Kubeconfig(rke2Cluster, rke2User))
	c, err := Load(root, kubeconfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != "https://127.0.0.1:6443" || string(c.CA) != "CA" || string(c.Cert) != "CERT" || string(c.Key) != "KEY" || c.Token != "" {
		t.Errorf("loaded %+v", c)
	}
	inline := "    client-certificate-data: " + base64.StdEncoding.EncodeToString([]byte("C2")) +
		"\n    client-key-data: " + base64.StdEncoding.EncodeToString([]byte("K2")) + "\n    tokenFile: token"
	c, err = Load(agentHost(t, rke2Kubeconfig(rke2Cluster, inline)), kubeconfigFile)
	if err != nil || string(c.Cert) != "C2" || string(c.Key) != "K2" || c.Token != "secret-token" {
		t.Errorf("inline data and tokenFile: %+v, %v", c, err)
	}
}

// Every kubeconfig outside the subset is refused with the file, the key
// and what to do.
func TestLoadRefuses(t *testing.T) {
	f := "kubeconfig " + "%ROOT%" + kubeconfigFile + ": "
	for _, c := range []struct{ name, file, want string }{
		{"not yaml", "clusters: [", f + "not a kubeconfig"},
		{"no context", strings.Replace(rke2Kubeconfig(rke2Cluster, rke2User), "current-context: Default", "", 1), f + "no current-context: set one"},
		{"missing context", strings.Replace(rke2Kubeconfig(rke2Cluster, rke2User), "current-context: Default", "current-context: other", 1), f + `current-context "other": no context of that name`},
		{"exec plugin", rke2Kubeconfig(rke2Cluster, "    exec:\n      command: aws"), f + `user: key "exec" is not supported (supported: client-certificate,`},
		{"insecure", rke2Kubeconfig(rke2Cluster+"\n    insecure-skip-tls-verify: true", rke2User), f + `cluster: key "insecure-skip-tls-verify" is not supported`},
		{"http", rke2Kubeconfig("    server: http://127.0.0.1:6443", rke2User), f + `cluster.server "http://127.0.0.1:6443": only https:// servers are supported`},
		{"no server", rke2Kubeconfig("    certificate-authority: server-ca.crt", rke2User), f + "cluster.server is missing"},
		{"cert without key", rke2Kubeconfig(rke2Cluster, "    client-certificate: client-kubelet.crt"), f + "user has a client certificate or a client key but not both"},
		{"no credentials", rke2Kubeconfig(rke2Cluster, "    username: admin"), f + `user: key "username" is not supported`},
		{"nothing", rke2Kubeconfig(rke2Cluster, "    {}"), f + "user has no client certificate and no token"},
		{"both", rke2Kubeconfig(rke2Cluster, rke2User+"\n    client-key-data: S0VZ"), f + "user.client-key and user.client-key-data are both set: keep one"},
		{"missing file", rke2Kubeconfig(rke2Cluster, "    client-certificate: gone.crt\n    client-key: client-kubelet.key"), f + "user.client-certificate /var/lib/rancher/rke2/agent/gone.crt: "},
		{"bad base64", rke2Kubeconfig("    server: https://x\n    certificate-authority-data: '!!'", rke2User), f + "cluster.certificate-authority-data: not base64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := agentHost(t, c.file)
			_, err := Load(root, kubeconfigFile)
			want := strings.ReplaceAll(c.want, "%ROOT%", root.Dir())
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %v\nwant the start %q", err, want)
			}
		})
	}
	if _, err := Load(testhost.New(t).Root(), kubeconfigFile); err == nil || !strings.Contains(err.Error(), kubeconfigFile) {
		t.Errorf("no kubeconfig: %v, want an error naming %s", err, kubeconfigFile)
	}
}

// FuzzLoad: whatever the file holds, Load returns an error or credentials
// a client can use (an https server, a whole key pair or a token), never
// a half-read result.
func FuzzLoad(f *testing.F) {
	f.Add(rke2Kubeconfig(rke2Cluster, rke2User))
	f.Add(rke2Kubeconfig(rke2Cluster, "    token: abc"))
	f.Add(rke2Kubeconfig("    server: https://h\n    certificate-authority-data: Q0E=", "    tokenFile: token"))
	f.Add("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {token: t}}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Load(agentHost(t, text), kubeconfigFile)
		if err != nil {
			if !strings.Contains(err.Error(), kubeconfigFile) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if !strings.HasPrefix(c.Server, "https://") || (c.Cert == nil) != (c.Key == nil) || (c.Cert == nil && c.Token == "") {
			t.Fatalf("credentials a client cannot use: %+v", c)
		}
	})
}
