package proof

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
)

// decodePods keeps every pod whose UID, namespace and name an API server
// could send, the last of a UID when one comes twice, and nothing else:
// a name that is not an object's name (a newline, an escape) is never
// believed, so the census never prints it.
func FuzzDecodePods(f *testing.F) {
	f.Add("u1", "istio-demo", "legacy-sidecar", "u2", "kube-system", "etcd.node-a", "")
	f.Add("u1", "a\nb", "x", "u1", "ns", "\x1b[31m", "tok")
	f.Add("", "ns", "name", "u", "", "name", "")
	f.Fuzz(func(t *testing.T, uid1, ns1, name1, uid2, ns2, name2, cont string) {
		items := []map[string]any{
			{"metadata": map[string]any{"uid": uid1, "namespace": ns1, "name": name1}},
			{"metadata": map[string]any{"uid": uid2, "namespace": ns2, "name": name2}},
		}
		data, err := json.Marshal(map[string]any{"kind": "PodList", "metadata": map[string]any{"continue": cont}, "items": items})
		for _, s := range []string{uid1, ns1, name1, uid2, ns2, name2, cont} {
			if !utf8.ValidString(s) {
				return // JSON carries text: the API server sends no invalid UTF-8
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		pods := map[string]census.Pod{}
		got, err := decodeInto(data, pods)
		if err != nil {
			t.Fatalf("a PodList does not decode: %v\n%s", err, data)
		}
		if got != cont {
			t.Errorf("continue %q, want %q", got, cont)
		}
		want := map[string]census.Pod{}
		for _, it := range [][3]string{{uid1, ns1, name1}, {uid2, ns2, name2}} {
			if it[0] != "" && objectName(it[1], 63) && objectName(it[2], 253) {
				want[it[0]] = census.Pod{Namespace: it[1], Name: it[2]}
			}
		}
		if len(pods) != len(want) {
			t.Fatalf("decoded %v, want %v", pods, want)
		}
		for uid, p := range want {
			if pods[uid] != p {
				t.Errorf("uid %q: %+v, want %+v", uid, pods[uid], p)
			}
		}
		for _, p := range pods {
			for _, c := range []byte(p.Namespace + p.Name) {
				if c < '-' || c > 'z' || c == '/' {
					t.Fatalf("kept %q/%q, which is no object name", p.Namespace, p.Name)
				}
			}
		}
	})
}

// A static pod (RKE2's kube-proxy, etcd, the control plane) runs under the
// kubelet's UID, which the API shows as its mirror pod's annotation: the
// census names it by that too.
func TestDecodePodsNamesStaticPods(t *testing.T) {
	const static = "9d5e7e1bd2e8b1c3a0f4e6d8c2b4a6f8"
	data := `{"kind":"PodList","metadata":{},"items":[{"metadata":{"uid":"0f3c5a4e-8b1d-4c2a-9e7f-123456789abc","namespace":"kube-system","name":"kube-proxy-node-a","annotations":{"kubernetes.io/config.mirror":"` + static + `"}}}]}`
	pods := map[string]census.Pod{}
	if _, err := decodeInto([]byte(data), pods); err != nil {
		t.Fatal(err)
	}
	want := census.Pod{Namespace: "kube-system", Name: "kube-proxy-node-a"}
	if pods[static] != want || pods["0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"] != want {
		t.Errorf("pods %v; want the mirror pod under both UIDs", pods)
	}
}

// Not a PodList: an error, and nothing kept.
func TestDecodePodsRefusesOtherKinds(t *testing.T) {
	pods := map[string]census.Pod{}
	for _, data := range []string{`{"kind":"NodeList","items":[{"metadata":{"uid":"u","namespace":"n","name":"x"}}]}`, `[`, `{}`} {
		if _, err := decodeInto([]byte(data), pods); err == nil || len(pods) != 0 {
			t.Errorf("%s: %v, kept %v; want an error and nothing", data, err, pods)
		}
	}
}

// decodeInto adds decodePods's pods to pods, as nodePods does.
func decodeInto(data []byte, pods map[string]census.Pod) (string, error) {
	list, cont, err := decodePods(data)
	for _, p := range list {
		pods[p.uid] = p.pod
	}
	return cont, err
}
