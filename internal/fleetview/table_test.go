package fleetview

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

var now = time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)

// fleet is a NodeList as the API server returns it: a node proving its
// plan, one in drift with a long message, one whose watch cannot tell,
// one whose watch stopped (its last False older than its stale-after),
// one not yet reporting and one without the tool.
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
			vocab.NodeAnnotationDecisionSource: "auto", vocab.NodeAnnotationVerifiedAt: at, vocab.NodeAnnotationStaleAfter: "30m0s"}
	}
	// The census is on in watch on two nodes: the NAS's pods hold legacy
	// rules, worker-1 is legacy-free.
	nas, w1 := ann("iptables-legacy", "iptables", "2026-11-28T21:00:00Z"), ann("iptables-nft", "iptables", "2026-12-02T01:58:30Z")
	nas[vocab.NodeAnnotationLegacyFree] = "no; namespaces=2; host; pods=0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"
	w1[vocab.NodeAnnotationLegacyFree] = "yes"
	data, err := json.Marshal(map[string]any{"kind": "NodeList", "apiVersion": "v1", "items": []any{
		node("worker-2", "nftables", ann("none", "nftables", "2026-12-01T23:55:00Z"),
			map[string]string{"status": "True", "reason": "KubeProxyRulesWrong", "lastHeartbeatTime": "2026-12-02T01:59:00Z",
				"message": "3 finding(s), first [missing-chain] nftables ipv4 table kube-proxy lacks chain services\t(kube-proxy writes it at every sync)\nfix: restart rke2-server; " +
					"if it stays, run rke2-proxy-backend verify for every finding and compare with rke2-proxy-backend render expected --backend nftables"}),
		node("worker-1", "iptables-nft", w1,
			map[string]string{"status": "False", "reason": "KubeProxyRulesVerified", "lastHeartbeatTime": "2026-12-02T01:58:30Z",
				"message": "kube-proxy's rules complete in iptables-nft, none stranded"}),
		node("nas-1", "iptables-legacy", nas,
			map[string]string{"status": "Unknown", "reason": "CannotTell", "message": "no plan", "lastHeartbeatTime": "2026-12-02T01:55:00Z"}),
		node("stopped-1", "iptables-nft", ann("iptables-nft", "iptables", "2026-12-01T20:00:00Z"),
			map[string]string{"status": "False", "reason": "KubeProxyRulesVerified", "lastHeartbeatTime": "2026-12-01T20:00:00Z",
				"message": "kube-proxy's rules complete in iptables-nft, none stranded"}),
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
	nodes, _, err := DecodePage(data)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var rows []Row
	for _, n := range nodes {
		rows = append(rows, RowOf(n, now))
	}
	return rows
}

// The table at a terminal's 80 and 120 columns, every line within them
// (a long message cut with an ellipsis), and -o wide with every column
// and the message whole.
func TestTableGolden(t *testing.T) {
	rows := rowsOf(t, fleet(t))
	for _, c := range []struct {
		golden string
		width  int
		wide   bool
	}{{"testdata/table.txt", 80, false}, {"testdata/table_120.txt", 120, false}, {"testdata/table_wide.txt", 80, true}} {
		got := Table(rows, c.width, c.wide)
		golden.File(t, c.golden, []byte(got))
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if n := utf8.RuneCountInString(line); !c.wide && n > c.width {
				t.Errorf("a line of %d columns at width %d:\n%s", n, c.width, line)
			}
		}
		if c.wide && !strings.Contains(got, "render expected --backend nftables\n") {
			t.Errorf("-o wide cut the message:\n%s", got)
		}
	}
}

// A node whose watch stopped keeps its last False on the Node: the view
// calls it Unknown once its heartbeat is older than the node's
// stale-after (or, when it gives none, vocab.NodeStaleAfterMax), with
// check's words for a dead watch, and --problems lists it.
func TestStaleConditionIsUnknown(t *testing.T) {
	hb := now.Add(-31 * time.Minute)
	n := Node{Name: "n", Annotations: map[string]string{vocab.NodeAnnotationStaleAfter: "30m0s"},
		Condition: &Condition{Status: "False", Reason: "KubeProxyRulesVerified", Message: "ok", Heartbeat: hb}}
	r := RowOf(n, now)
	want := "stale status: the node's last heartbeat is 31m0s old (over its stale-after 30m0s); is rke2-proxy-backend-watch running? systemctl status rke2-proxy-backend-watch"
	if r.Problem != "Unknown" || r.Reason != ReasonCannotTell || r.Message != want || r.Reported != "False" || !r.HasProblem() {
		t.Errorf("31m after the heartbeat: %+v", r)
	}
	if r := RowOf(n, hb.Add(30*time.Minute)); r.Problem != "False" || r.HasProblem() {
		t.Errorf("30m after the heartbeat: %+v; want False still", r)
	}
	for v, limit := range map[string]time.Duration{"": vocab.NodeStaleAfterMax, "junk": vocab.NodeStaleAfterMax, "-1m": vocab.NodeStaleAfterMax,
		"8760h": vocab.NodeStaleAfterMax, "10m": 10 * time.Minute} {
		n.Annotations[vocab.NodeAnnotationStaleAfter] = v
		if got := n.StaleAfter(); got != limit {
			t.Errorf("stale-after %q: %s, want %s", v, got, limit)
		}
	}
	n.Condition.Heartbeat = time.Time{}
	if r := RowOf(n, now); r.Problem != "Unknown" || !strings.Contains(r.Message, "no lastHeartbeatTime") {
		t.Errorf("no heartbeat: %+v", r)
	}
}

func TestProblemsFilter(t *testing.T) {
	var with []string
	for _, r := range rowsOf(t, fleet(t)) {
		if r.HasProblem() {
			with = append(with, r.Node)
		}
	}
	if strings.Join(with, " ") != "nas-1 new-1 stopped-1 worker-2" {
		t.Errorf("--problems keeps %v; want nas-1 (cannot tell), new-1 (planned, never reported), stopped-1 (stale), worker-2 (drift)", with)
	}
}

func TestJSONRoundTrips(t *testing.T) {
	rows := rowsOf(t, fleet(t))
	data, err := JSON(rows)
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Nodes []Row }
	if err := json.Unmarshal(data, &back); err != nil || len(back.Nodes) != len(rows) || back.Nodes[5] != rows[5] {
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
		if _, _, err := DecodePage([]byte(in)); err == nil {
			t.Errorf("DecodePage(%s) accepted it", in)
		}
	}
}

// FuzzDecode: whatever the API server (or a node's annotations and
// condition) holds, DecodePage refuses it or gives nodes whose table has
// one line per node, at most the width wide but for the capped cells,
// with no rune a terminal would obey (controls, bidi, invalid UTF-8);
// -o json reads back to the same rows and carries no such rune raw.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"b","annotations":{"rke2-proxy-backend/mode":"x\ny"}}},{"metadata":{"name":"a"}}]}`))
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"a\u2028b","labels":{"rke2-proxy-backend/backend":"\t"}},"status":{"conditions":[{"type":"RKE2ProxyBackendProblem","status":"True","message":"\r\n"}]}}]}`))
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"c","annotations":{"rke2-proxy-backend/version":"\u009b31m\u202e\u2066x"}},"status":{"conditions":[{"type":"RKE2ProxyBackendProblem","status":"True","reason":"\u009d0;title\u0007","message":"\u001b]8;;x\u001b\\\u0085"}]}}]}`))
	f.Add([]byte("{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"\xff\xc2\"}}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, _, err := DecodePage(data)
		if err != nil {
			return
		}
		var rows []Row
		for _, n := range nodes {
			rows = append(rows, RowOf(n, now))
		}
		for _, wide := range []bool{false, true} {
			table := Table(rows, 80, wide)
			if lines := strings.Count(table, "\n"); lines != len(rows)+1 {
				t.Fatalf("%d nodes, %d table lines:\n%s", len(rows), lines, table)
			}
			checkSafe(t, strings.ReplaceAll(table, "\n", ""))
		}
		out, err := JSON(rows)
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, strings.ReplaceAll(string(out), "\n", ""))
		var back struct{ Nodes []Row }
		if err := json.Unmarshal(out, &back); err != nil || len(back.Nodes) != len(rows) {
			t.Fatalf("-o json does not read back: %v", err)
		}
		for i := range rows {
			if back.Nodes[i] != rows[i] && utf8.ValidString(fmt.Sprint(rows[i])) {
				t.Fatalf("-o json row %d reads back as %+v, was %+v", i, back.Nodes[i], rows[i])
			}
		}
	})
}

// FuzzOneLine: any string becomes valid UTF-8 without a control, bidi or
// separator rune, and a safe string stays as it was.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"plain", "a\tb\nc", "\x1b[31m", "\u009b31m", "\u009d0;x\u0007", "\u202eevil\u202c", "\u2066\u2069", "\xff\xfe", "\u200f\u061c", "ok ✓ 日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := oneLine(s)
		checkSafe(t, out)
		clean := utf8.ValidString(s)
		for _, r := range s {
			clean = clean && !unsafe(r)
		}
		if clean && out != s {
			t.Fatalf("oneLine(%q) = %q; a safe string must stay", s, out)
		}
	})
}

func checkSafe(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not UTF-8: %q", s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || unsafe(r) || unicode.Is(unicode.Bidi_Control, r) {
			t.Fatalf("rune %U reaches the terminal in %q", r, s)
		}
	}
}
