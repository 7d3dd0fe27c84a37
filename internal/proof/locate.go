package proof

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// KubeletKubeconfig is where RKE2's agent keeps the kubelet's credentials,
// under its data-dir (/var/lib/rancher/rke2 unless data-dir moves it):
// server https://127.0.0.1:6443 (the agent's load balancer), the server
// CA, and client-kubelet.crt/.key, a certificate for
// CN=system:node:<name>, O=system:nodes. The Node authorizer lets that
// identity patch Nodes and their status, and NodeRestriction narrows it
// to the node's own Node object: the least privilege the node already
// has, and no new Secret, ServiceAccount or RBAC binding to roll out.
// k3s's agent keeps the same file under its own data-dir
// (/var/lib/rancher/k3s).
const KubeletKubeconfig = "agent/kubelet.kubeconfig"

// Target is the Node to write and the credentials to write it with.
type Target struct {
	Node  string
	Creds kubeapi.Credentials
	// Notes say where the name came from when the config and the
	// certificate disagree.
	Notes []string
}

// Locate finds the node's name and its kubelet credentials under root,
// in kind's (RKE2's or k3s's) config and data-dir. The name is RKE2's: node-name from its config, else the kernel's
// hostname, lower-cased (k3s's agent lower-cases either, as Kubernetes
// object names must be). The kubelet's certificate names the identity
// NodeRestriction will hold the writes to; when it names another node
// (with-node-id appends an id RKE2 keeps elsewhere), the certificate wins
// and a note says so.
func Locate(root hostfs.Root, kind distro.Kind) (Target, error) {
	layout, _ := facts.RKE2Layout(root, kind)
	kubeconfig := path.Join(layout.DataDir, KubeletKubeconfig)
	creds, err := kubeapi.Load(root, kubeconfig)
	if err != nil {
		return Target{}, err
	}
	t := Target{Creds: creds}
	name := ""
	if v, ok := layout.Config.Values["node-name"].(string); ok {
		name = v
	}
	if name == "" {
		b, err := root.ReadFileMax("/proc/sys/kernel/hostname", 256)
		if err != nil {
			return Target{}, fmt.Errorf("the node's name: RKE2's config sets no node-name and the hostname cannot be read: %w", err)
		}
		name = strings.TrimSpace(string(b))
	}
	t.Node = strings.ToLower(name)
	if cn := certNode(creds.Cert); cn != "" && cn != t.Node {
		t.Notes = append(t.Notes, fmt.Sprintf("RKE2's config and hostname name this node %q, but its kubelet certificate (%s) is for node %q: writing %q, the one NodeRestriction allows", t.Node, creds.File, cn, cn))
		t.Node = cn
	}
	if t.Node == "" {
		return Target{}, fmt.Errorf("the node's name: RKE2's config sets node-name to \"\" and the hostname is empty: set node-name in RKE2's config")
	}
	return t, nil
}

// certNode is the node name in a kubelet client certificate's subject
// (CN=system:node:NAME), or "".
func certNode(certPEM []byte) string {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return ""
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return ""
	}
	name, ok := strings.CutPrefix(cert.Subject.CommonName, "system:node:")
	if !ok {
		return ""
	}
	return name
}
