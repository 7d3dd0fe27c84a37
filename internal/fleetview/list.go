package fleetview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// PageSize is how many Nodes one request asks for: kubectl's
// --chunk-size. Each page is one request with its own time limit
// (Connect's), so a big cluster over a slow link takes longer, not fails.
const PageSize = 500

// maxPages bounds a listing (a million Nodes): an API server that hands
// out continue tokens forever is not listing Nodes.
const maxPages = 2000

// maxRestarts bounds how often a listing whose continue token expired
// starts again from its first page.
const maxRestarts = 2

// ListNodes reads every Node matching selector (a label selector, "" for
// all) page by page, and returns them sorted by name. When a continue
// token expires (410 Gone: the API server compacted the history the
// listing was reading, after about five minutes), the listing starts
// again from its first page, as client-go's pager falls back to a fresh
// list, with a line on note; after maxRestarts it gives up saying so.
func ListNodes(ctx context.Context, list List, selector string, note func(string)) ([]Node, error) {
	for restart := 0; ; restart++ {
		nodes, err := listOnce(ctx, list, selector)
		var gone *expiredError
		switch {
		case err == nil:
			sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
			return nodes, nil
		case !errors.As(err, &gone):
			return nil, err
		case restart == maxRestarts:
			return nil, fmt.Errorf("%w; it expired %d times in a row: the listing is slower than the API server keeps its history (try a --pool selector, or a faster link)", err, restart+1)
		}
		note(fmt.Sprintf("%v: listing again from the first page", err))
	}
}

// expiredError is a continue token the API server no longer honours.
type expiredError struct {
	page int
	err  error
}

func (e *expiredError) Error() string {
	return fmt.Sprintf("page %d of the node list: the continue token expired (410 Gone: %v)", e.page, e.err)
}

func (e *expiredError) Unwrap() error { return e.err }

func listOnce(ctx context.Context, list List, selector string) ([]Node, error) {
	var nodes []Node
	cont := ""
	for page := 1; page <= maxPages; page++ {
		q := url.Values{"limit": {strconv.Itoa(PageSize)}}
		if selector != "" {
			q.Set("labelSelector", selector)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		body, err := list(ctx, "/api/v1/nodes?"+q.Encode())
		var se *kubeapi.StatusError
		switch {
		case err != nil && cont != "" && errors.As(err, &se) && se.Code == http.StatusGone:
			return nil, &expiredError{page: page, err: err}
		case err != nil && page > 1:
			return nil, fmt.Errorf("page %d of the node list (%d nodes read): %w", page, len(nodes), err)
		case err != nil:
			return nil, err
		}
		p, err := DecodePage(body)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
		nodes = append(nodes, p.Nodes...)
		if p.Continue == "" {
			return nodes, nil
		}
		cont = p.Continue
	}
	return nil, fmt.Errorf("the node list did not end after %d pages of %d", maxPages, PageSize)
}
