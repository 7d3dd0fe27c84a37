package fleetview

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// pages serves n Nodes PageSize at a time as the API server does (a
// continue token per page but the last), answering a continue token the
// way the API server answers one it compacted away (410 Gone, reason
// Expired) as often as expire says.
type pages struct {
	n, expire int
	asked     []string
}

func (p *pages) list(_ context.Context, path string) ([]byte, error) {
	p.asked = append(p.asked, path)
	u, err := url.Parse(path)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if q.Get("limit") != fmt.Sprint(PageSize) {
		return nil, fmt.Errorf("limit %q", q.Get("limit"))
	}
	from := 0
	if c := q.Get("continue"); c != "" {
		if p.expire > 0 {
			p.expire--
			return nil, &kubeapi.StatusError{Method: "GET", Path: path, Code: http.StatusGone, Reason: "Expired",
				Message: "The provided continue parameter is too old to display a consistent list result."}
		}
		fmt.Sscan(c, &from)
	}
	var items []any
	for i := from; i < min(from+PageSize, p.n); i++ {
		items = append(items, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("node-%05d", i)}})
	}
	meta := map[string]any{}
	if from+PageSize < p.n {
		meta["continue"] = fmt.Sprint(from + PageSize)
	}
	return json.Marshal(map[string]any{"kind": "NodeList", "metadata": meta, "items": items})
}

// The list is read page by page with kubectl's chunk size; an expired
// continue token starts the listing again (with a note), and one that
// keeps expiring ends it with what to do.
func TestListNodesPages(t *testing.T) {
	p := &pages{n: 1201}
	nodes, err := ListNodes(context.Background(), p.list, "a=b", func(string) { t.Error("a note without an expiry") })
	if err != nil || len(nodes) != 1201 || nodes[0].Name != "node-00000" || nodes[1200].Name != "node-01200" {
		t.Fatalf("%d nodes, %v", len(nodes), err)
	}
	if want := []string{"/api/v1/nodes?labelSelector=a%3Db&limit=500", "/api/v1/nodes?continue=500&labelSelector=a%3Db&limit=500",
		"/api/v1/nodes?continue=1000&labelSelector=a%3Db&limit=500"}; strings.Join(p.asked, " ") != strings.Join(want, " ") {
		t.Errorf("asked %v, want %v", p.asked, want)
	}

	p = &pages{n: 1201, expire: 1}
	var notes []string
	nodes, err = ListNodes(context.Background(), p.list, "", func(l string) { notes = append(notes, l) })
	if err != nil || len(nodes) != 1201 || len(notes) != 1 || !strings.Contains(notes[0], "page 2 of the node list: the continue token expired (410 Gone") ||
		!strings.HasSuffix(notes[0], "listing again from the first page") {
		t.Fatalf("one expiry: %d nodes, %v, notes %q", len(nodes), err, notes)
	}
	if len(p.asked) != 5 || strings.Contains(p.asked[2], "continue") {
		t.Errorf("after the expiry asked %v; want the list again from its first page", p.asked)
	}

	p = &pages{n: 1201, expire: 100}
	_, err = ListNodes(context.Background(), p.list, "", func(string) {})
	if err == nil || !strings.Contains(err.Error(), "expired 3 times in a row") || !strings.Contains(err.Error(), "--pool") {
		t.Errorf("an expiry every time: %v", err)
	}
}
