package proof

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/fleetview"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Each node writes its census with RKE2's kubelet credentials to a real
// kube-apiserver (NodeRestriction on); `kubectl proxy-backend -o wide`,
// reading the Node objects with an admin's kubeconfig, shows it as
// LEGACY-FREE, and "-" for a node that never took one.
func TestCensusAgainstAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	for node, value := range map[string]string{"node-held": "no; namespaces=1; pods=" + uidA, "node-free": "yes"} {
		api.RegisterNode(node)
		h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: "+node+"\n")
		api.InstallRKE2Agent(h.Dir(), node)
		s := State{Verdict: Verdict{Status: Problem, Message: "x"}, At: time.Now(), Version: "v9", LegacyFree: value}
		if err := WriteOnce(context.Background(), h.Root(), distro.RKE2, s, func(l string) { t.Log(l) }); err != nil {
			t.Fatalf("%s: WriteOnce: %v", node, err)
		}
		if got := api.Node(node).Annotations[AnnotationLegacyFree]; got != value {
			t.Errorf("%s: %s = %q on the Node, want %q", node, AnnotationLegacyFree, got, value)
		}
	}
	api.RegisterNode("node-none")
	var out, errb strings.Builder
	env := fleetview.Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": api.AdminKubeconfig}[k] }, Stdout: &out, Stderr: &errb, Now: time.Now}
	if code := fleetview.Run(context.Background(), []string{"-o", "wide"}, env, fleetview.Connect); code != fleetview.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Logf("kubectl proxy-backend -o wide:\n%s", out.String())
	col := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	at := strings.Index(lines[0], "LEGACY-FREE")
	if at < 0 {
		t.Fatalf("no LEGACY-FREE column:\n%s", out.String())
	}
	for _, l := range lines[1:] {
		col[strings.Fields(l)[0]] = strings.Fields(l[at:])[0]
	}
	for node, want := range map[string]string{"node-held": "no", "node-free": "yes", "node-none": "-"} {
		if col[node] != want {
			t.Errorf("%s: LEGACY-FREE %q, want %q", node, col[node], want)
		}
	}
}
