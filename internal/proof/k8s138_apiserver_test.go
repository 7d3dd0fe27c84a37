package proof

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/fleetview"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Each node writes its 1.38 readiness with RKE2's kubelet credentials to
// a real kube-apiserver (NodeRestriction on); `kubectl proxy-backend
// --upgrade 1.38`, reading the Node objects with an admin's kubeconfig,
// lists the nodes that would move (one on 1.37, where IPTABLES_MODE still
// decides, one on 1.38, whose kube-proxy has moved already) and the one
// that never said, and not the ones that stay.
func TestK8s138AgainstAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	for _, c := range []struct {
		node   string
		expect backend.Backend
		minor  int
		live   []*rules.Ruleset
	}{
		{"node-moves", backend.IptablesNFT, 37, []*rules.Ruleset{withoutHints(skeleton(t, backend.IptablesNFT, 1)), hintOnly(backend.IptablesLegacy)}},
		{"node-moved", backend.IptablesLegacy, 38, []*rules.Ruleset{skeleton(t, backend.IptablesLegacy, 1), hintOnly(backend.IptablesNFT)}},
		{"node-stays", backend.IptablesLegacy, 38, []*rules.Ruleset{skeleton(t, backend.IptablesLegacy, 1)}},
		{"node-nftables", backend.NFTables, 38, []*rules.Ruleset{skeleton(t, backend.NFTables, 1), hintOnly(backend.IptablesLegacy)}},
	} {
		api.RegisterNode(c.node)
		h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: "+c.node+"\n")
		api.InstallRKE2Agent(h.Dir(), c.node)
		res := judged(t, verify.Options{Expect: c.expect, Kubernetes: rke2.KubeVersion{Major: 1, Minor: c.minor, Patch: -1}, Reader: fakeOf(c.live...)})
		s := State{Result: res, Verdict: Verdict{Status: Problem, Message: "x"}, At: time.Now(), Mode: res.Mode, Version: "v9", K138: Readiness138Of(res)}
		if err := WriteOnce(context.Background(), h.Root(), distro.RKE2, s, func(l string) { t.Log(l) }); err != nil {
			t.Fatalf("%s: WriteOnce: %v", c.node, err)
		}
		n := api.Node(c.node)
		if got, want := n.Annotations[AnnotationK8s138], s.K138.Value(); got != want {
			t.Errorf("%s: %s = %q on the Node, want %q", c.node, AnnotationK8s138, got, want)
		}
		if got, want := n.Annotations[AnnotationIptablesMode], s.K138.IptablesMode; got != want || want == "" {
			t.Errorf("%s: %s = %q on the Node, want %q", c.node, AnnotationIptablesMode, got, want)
		}
	}
	api.RegisterNode("node-old") // an older writer: no annotation
	var out, errb strings.Builder
	env := fleetview.Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": api.AdminKubeconfig}[k] }, Stdout: &out, Stderr: &errb, Now: time.Now}
	if code := fleetview.Run(context.Background(), []string{"--upgrade", "1.38"}, env, fleetview.Connect); code != fleetview.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	t.Logf("kubectl proxy-backend --upgrade 1.38:\n%s", got)
	for _, want := range []string{
		"node-moves  moves    iptables-legacy  iptables-nft     yes  ", "update-alternatives --set iptables /usr/sbin/iptables-nft",
		"node-moved  moves    iptables-nft     iptables-legacy  no   ", "cleanup --kubelet-hints",
		"node-old    unknown  -                -                -    ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the view lacks %q", want)
		}
	}
	for _, not := range []string{"node-stays", "node-nftables"} {
		if strings.Contains(got, not) {
			t.Errorf("the view lists %s, which keeps its backend on 1.38", not)
		}
	}
}
