package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
)

// Paging bounds one paged list (GET path?limit=...&continue=...).
type Paging struct {
	What  string // the list as errors name it: "node list"
	Limit int    // items a page
	// MaxPages bounds one listing: an API server handing out continue
	// tokens forever is not listing what was asked.
	MaxPages int
	// Restarts is how often a listing whose continue token expired (410
	// Gone: the API server compacted the history it was reading, after
	// about five minutes) starts again from its first page, as
	// client-go's pager falls back to a fresh list, with a line on Note;
	// 0 never does. Hint, with Restarts, says what to do when it kept
	// expiring.
	Restarts int
	Note     func(string)
	Hint     string
}

// List reads every item of path?query, page by page, decode giving a
// page's items and its continue token ("" on the last page). It returns
// the requests sent too, the failed one included. A list stops after
// MaxPages pages.
func List[T any](ctx context.Context, get func(context.Context, string) ([]byte, error), path string, query url.Values, p Paging,
	decode func([]byte) ([]T, string, error)) (items []T, requests int, err error) {
	for restart := 0; ; restart++ {
		items, n, expired, err := listOnce(ctx, get, path, query, p, decode)
		requests += n
		switch {
		case !expired || p.Restarts == 0:
			return items, requests, err
		case restart == p.Restarts:
			return nil, requests, fmt.Errorf("%w; it expired %d times in a row: the listing is slower than the API server keeps its history %s", err, restart+1, p.Hint)
		}
		p.Note(fmt.Sprintf("%v: listing again from the first page", err))
	}
}

func listOnce[T any](ctx context.Context, get func(context.Context, string) ([]byte, error), path string, query url.Values, p Paging,
	decode func([]byte) (more []T, cont string, err error)) (items []T, requests int, expired bool, err error) {
	q := url.Values{"limit": {strconv.Itoa(p.Limit)}}
	maps.Copy(q, query)
	for page := 1; page <= p.MaxPages; page++ {
		body, err := get(ctx, path+"?"+q.Encode())
		var se *StatusError
		switch {
		case err != nil && page > 1 && errors.As(err, &se) && se.Code == http.StatusGone:
			return nil, page, true, fmt.Errorf("page %d of the %s: the continue token expired (410 Gone: %w)", page, p.What, err)
		case err != nil && page > 1:
			return nil, page, false, fmt.Errorf("page %d of the %s (%d items read): %w", page, p.What, len(items), err)
		case err != nil:
			return nil, page, false, err
		}
		more, cont, err := decode(body)
		if err != nil {
			return nil, page, false, fmt.Errorf("page %d of the %s: %w", page, p.What, err)
		}
		items = append(items, more...)
		if cont == "" {
			return items, page, false, nil
		}
		q.Set("continue", cont)
	}
	return nil, p.MaxPages, false, fmt.Errorf("the %s did not end after %d pages of %d", p.What, p.MaxPages, p.Limit)
}
