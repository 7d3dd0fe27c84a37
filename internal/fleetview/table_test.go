package fleetview

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

var now = time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)

// fleet is a NodeList as the API server returns it: a node proving its
// plan, one in drift, one whose watch cannot tell, one not yet reporting
// and one without the tool.
func fleet(t *testing.T) []byte {
	t.Helper()
	node := func(name, planned string, ann map[string]string, cond map[string]string) map[string]any {
		labels := map[string]string{"kubernetes.io/hostname": name}
		if planned != "" {
			labels[vocab.NodeLabelPlanned] = planned
		}
		n := map[string]any{"metadata": map[string]any{"name": name, "labels": labels, "annotations": ann, "creationTimestamp": "2026-11-01T00:00:00Z"},
			"status": map[string]any{"conditions": []any{map[string]string{"type": "Ready", "status": "True"}}}}
		if cond != nil {
			cond["type"] = vocab.NodeConditionType
			n["status"].(map[string]any)["conditions"] = append(n["status"].(map[string]any)["conditions"].([]any), cond)
		}
		return n
	}
	ann := func(verified, mode, at string) map[string]string {
		return map[string]string{vocab.NodeAnnotationVerifiedBackend: verified, vocab.NodeAnnotationMode: mode, vocab.NodeAnnotationVersion: "0.9.0",
			vocab.NodeAnnotationDecisionSource: "auto", vocab.NodeAnnotationVerifiedAt: at}
	}
	data, err := json.Marshal(map[string]any{"kind": "NodeList", "apiVersion": "v1", "items": []any{
		node("worker-2", "nftables", ann("none", "nftables", "2026-12-01T23:55:00Z"),
			map[string]string{"status": "True", "reason": "KubeProxyRulesWrong", "message": "kube-proxy's rules\tdrifted\nfor 2m"}),
		node("worker-1", "iptables-nft", ann("iptables-nft", "iptables", "2026-12-02T01:58:30Z"),
			map[string]string{"status": "False", "reason": "KubeProxyRulesVerified"}),
		node("nas-1", "iptables-legacy", ann("iptables-legacy", "iptables", "2026-11-28T21:00:00Z"),
			map[string]string{"status": "Unknown", "reason": "CannotTell", "message": "no plan"}),
		node("new-1", "iptables-nft", nil, nil),
		node("plain-1", "", nil, nil),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rowsOf(t *testing.T, data []byte) []Row {
	t.Helper()
	nodes, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, n := range nodes {
		rows = append(rows, RowOf(n, now))
	}
	return rows
}

func TestTableGolden(t *testing.T) {
	got := Table(rowsOf(t, fleet(t)))
	golden := "testdata/table.txt"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("table differs from %s (UPDATE_GOLDEN=1 rewrites it after review):\n%s", golden, got)
	}
}

func TestProblemsFilter(t *testing.T) {
	var with []string
	for _, r := range rowsOf(t, fleet(t)) {
		if r.HasProblem() {
			with = append(with, r.Node)
		}
	}
	if strings.Join(with, " ") != "nas-1 new-1 worker-2" {
		t.Errorf("--problems keeps %v; want nas-1 (cannot tell), new-1 (planned, never reported), worker-2 (drift)", with)
	}
}

func TestJSONRoundTrips(t *testing.T) {
	rows := rowsOf(t, fleet(t))
	data, err := JSON(rows)
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Nodes []Row }
	if err := json.Unmarshal(data, &back); err != nil || len(back.Nodes) != len(rows) || back.Nodes[4] != rows[4] {
		t.Fatalf("-o json does not read back: %v\n%s", err, data)
	}
	if data, _ := JSON(nil); strings.TrimSpace(string(data)) != "{\n  \"nodes\": []\n}" {
		t.Errorf("no nodes: %s; want an empty list, not null", data)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 59 * time.Second: "59s", 90 * time.Second: "1m30s", time.Hour: "1h",
		26*time.Hour + 5*time.Minute: "1d2h", 72 * time.Hour: "3d",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, in := range []string{`{"kind":"Node"}`, `[`, `{"kind":"NodeList","items":{}}`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) accepted it", in)
		}
	}
}

// FuzzDecode: whatever the API server (or a node's annotations) holds,
// Decode refuses it or gives nodes sorted by name whose table has one
// line per node, and -o json reads back to the same rows.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"b","annotations":{"rke2-proxy-backend/mode":"x\ny"}}},{"metadata":{"name":"a"}}]}`))
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"a\u2028b","labels":{"rke2-proxy-backend/backend":"\t"}},"status":{"conditions":[{"type":"RKE2ProxyBackendProblem","status":"True","message":"\r\n"}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := Decode(data)
		if err != nil {
			return
		}
		var rows []Row
		for i, n := range nodes {
			if i > 0 && nodes[i-1].Name > n.Name {
				t.Fatalf("not sorted: %q before %q", nodes[i-1].Name, n.Name)
			}
			rows = append(rows, RowOf(n, now))
		}
		if lines := strings.Count(Table(rows), "\n"); lines != len(rows)+1 {
			t.Fatalf("%d nodes, %d table lines:\n%s", len(rows), lines, Table(rows))
		}
		out, err := JSON(rows)
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ Nodes []Row }
		if err := json.Unmarshal(out, &back); err != nil || len(back.Nodes) != len(rows) {
			t.Fatalf("-o json does not read back: %v", err)
		}
	})
}
