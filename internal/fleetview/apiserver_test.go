package fleetview

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// The plugin against a real kube-apiserver holding Nodes the test writes
// as verify and watch would (the node label at registration, annotations
// and the condition on status), read with an operator's kubeconfig
// through the same Connect the binary uses. stopped-1's watch stopped an
// hour ago: its condition still says False on the Node, and the plugin
// calls it Unknown and lists it under --problems.
func TestPluginAgainstARealAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	type node struct{ name, planned, verified, mode, at, status, reason, message, heartbeat string }
	for _, n := range []node{
		{"worker-1", "iptables-nft", "iptables-nft", "iptables", "2026-12-02T01:58:30Z", "False", "KubeProxyRulesVerified", "kube-proxy's rules complete in iptables-nft, none stranded", "2026-12-02T01:58:30Z"},
		{"worker-2", "nftables", "none", "nftables", "2026-12-01T23:55:00Z", "True", "KubeProxyRulesWrong", "1 finding(s), first [missing-chain] ...", "2026-12-02T01:59:00Z"},
		{"new-1", "iptables-nft", "", "", "", "", "", "", ""},
		{"stopped-1", "iptables-nft", "iptables-nft", "iptables", "2026-12-02T01:00:00Z", "False", "KubeProxyRulesVerified", "kube-proxy's rules complete in iptables-nft, none stranded", "2026-12-02T01:00:00Z"},
	} {
		api.RegisterNode(n.name)
		meta := map[string]any{"labels": map[string]string{vocab.NodeLabelPlanned: n.planned, "node-pool": "edge"}}
		if n.verified != "" {
			meta["annotations"] = map[string]string{vocab.NodeAnnotationVerifiedBackend: n.verified, vocab.NodeAnnotationMode: n.mode,
				vocab.NodeAnnotationVersion: "0.1.0", vocab.NodeAnnotationDecisionSource: "auto", vocab.NodeAnnotationVerifiedAt: n.at,
				vocab.NodeAnnotationStaleAfter: "30m0s"}
		}
		patch(t, api, "/api/v1/nodes/"+n.name, "application/merge-patch+json", map[string]any{"metadata": meta})
		if n.status != "" {
			patch(t, api, "/api/v1/nodes/"+n.name+"/status", "application/strategic-merge-patch+json", map[string]any{"status": map[string]any{
				"conditions": []any{map[string]string{"type": vocab.NodeConditionType, "status": n.status, "reason": n.reason, "message": n.message,
					"lastHeartbeatTime": n.heartbeat, "lastTransitionTime": n.at}}}})
		}
	}
	api.RegisterNode("other-1") // no pool label: --pool leaves it out
	kubeconfig := api.AdminKubeconfig
	var out, errb strings.Builder
	env := Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": kubeconfig}[k] }, Stdout: &out, Stderr: &errb,
		Now: func() time.Time { return time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC) }}
	if code := Run(context.Background(), []string{"--pool", "node-pool=edge"}, env, Connect); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	golden.File(t, "testdata/apiserver_table.txt", []byte(out.String()))
	out.Reset()
	if code := Run(context.Background(), []string{"--problems", "-o", "json"}, env, Connect); code != ExitOK ||
		!strings.Contains(out.String(), `"node": "worker-2"`) || strings.Contains(out.String(), `"node": "worker-1"`) ||
		!strings.Contains(out.String(), `"reported": "False"`) || !strings.Contains(out.String(), `"message": "stale status: the node's last heartbeat is 1h0m0s old (over its stale-after 30m0s)`) {
		t.Errorf("--problems -o json: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

func patch(t *testing.T, api *apiserver.Server, path, kind string, body map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if code, resp := api.Do(http.MethodPatch, path, kind, data); code != http.StatusOK {
		t.Fatalf("PATCH %s: %d %s", path, code, resp)
	}
}

// A kubeconfig whose user authenticates in a way the plugin does not
// speak (an exec plugin, as cloud providers' kubeconfigs do) is refused
// naming the file and the key, before any request.
func TestConnectRefusesUnsupportedAuth(t *testing.T) {
	f := filepath.Join(t.TempDir(), "config")
	kc := `apiVersion: v1
kind: Config
current-context: c
clusters: [{name: k, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}}]
`
	if err := os.WriteFile(f, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(f)
	if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "exec") {
		t.Fatalf("Connect with an exec user: %v; want the file and the key named", err)
	}
}
