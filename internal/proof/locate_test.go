package proof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Locate names the node as RKE2 names it (node-name, lower-cased), or as
// its kubelet certificate says when the config disagrees. On k3s the
// node's name is in k3s's config and the kubelet's credentials under
// k3s's data-dir (/var/lib/rancher/k3s/agent), not RKE2's: Locate of
// distro.Kind("k3s") finds them there and names the node as k3s's config does.
func TestLocate(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: NODE-A\n")
	api.InstallRKE2Agent(h.Dir(), "node-a")
	target, err := Locate(h.Root(), distro.RKE2)
	if err != nil || target.Node != "node-a" || len(target.Notes) != 0 {
		t.Fatalf("Locate: %+v, %v: want node-a (node-name lower-cased), no notes", target, err)
	}
	other := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: elsewhere\n")
	api.InstallRKE2Agent(other.Dir(), "node-a")
	if target, err := Locate(other.Root(), distro.RKE2); err != nil || target.Node != "node-a" || len(target.Notes) != 1 || !strings.Contains(target.Notes[0], `is for node "node-a"`) {
		t.Errorf("Locate with a certificate for another name: %+v, %v: want node-a and a note", target, err)
	}

	api.RegisterNode("node-k")
	h = testhost.New(t).File("/etc/rancher/k3s/config.yaml", "node-name: Node-K\n")
	// The kit writes RKE2's agent layout; move it where k3s's agent keeps it.
	api.InstallRKE2Agent(h.Dir(), "node-k")
	rke2Dir, k3sDir := filepath.Join(h.Dir(), "var/lib/rancher/rke2"), filepath.Join(h.Dir(), "var/lib/rancher/k3s")
	if err := os.Rename(rke2Dir, k3sDir); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(k3sDir, KubeletKubeconfig)
	b, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, []byte(strings.ReplaceAll(string(b), "/var/lib/rancher/rke2/", "/var/lib/rancher/k3s/")), 0o600); err != nil {
		t.Fatal(err)
	}
	target, err = Locate(h.Root(), distro.Kind("k3s"))
	if err != nil || target.Node != "node-k" || len(target.Notes) != 0 {
		t.Fatalf("Locate on k3s: %+v, %v: want node-k from k3s's config and credentials under /var/lib/rancher/k3s/agent", target, err)
	}
	if want := h.Root().Path("/var/lib/rancher/k3s/" + KubeletKubeconfig); target.Creds.File != want {
		t.Errorf("credentials read from %s, want %s", target.Creds.File, want)
	}
}
