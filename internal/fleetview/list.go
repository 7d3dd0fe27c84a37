package fleetview

import (
	"context"
	"net/url"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// PageSize is how many Nodes one request asks for: kubectl's
// --chunk-size. Each page is one request with its own time limit
// (Connect's), so a big cluster over a slow link takes longer, not fails.
const PageSize = 500

// ListNodes reads every Node matching selector (a label selector, "" for
// all) page by page, and returns them sorted by name. It reads at most
// 2000 pages (a million Nodes), and starts again from the first page,
// with a line on note, at most twice when a continue token expires.
func ListNodes(ctx context.Context, list List, selector string, note func(string)) ([]Node, error) {
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	p := kubeapi.Paging{What: "node list", Limit: PageSize, MaxPages: 2000, Restarts: 2, Note: note,
		Hint: "(try a --pool selector, or a faster link)"}
	nodes, _, err := kubeapi.List(ctx, list, "/api/v1/nodes", q, p, DecodePage)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, err
}
