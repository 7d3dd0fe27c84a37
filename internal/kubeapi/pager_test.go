package kubeapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A list whose continue tokens never end stops at MaxPages, every page
// counted as a request; without Restarts an expired token ends the
// listing at once, saying so.
func TestListBounds(t *testing.T) {
	var asked []string
	endless := func(_ context.Context, path string) ([]byte, error) {
		asked = append(asked, path)
		return []byte(`{"items":[1]}`), nil
	}
	decode := func([]byte) ([]int, string, error) { return []int{1}, "more", nil }
	p := Paging{What: "pod list", Limit: 1, MaxPages: 3}
	items, n, err := List(context.Background(), endless, "/api/v1/pods", nil, p, decode)
	if err == nil || err.Error() != "the pod list did not end after 3 pages of 1" || n != 3 || items != nil {
		t.Errorf("endless list: %v items, %d requests, %v", items, n, err)
	}
	if len(asked) != 3 || asked[0] != "/api/v1/pods?limit=1" || asked[2] != "/api/v1/pods?continue=more&limit=1" {
		t.Errorf("asked %q", asked)
	}

	expiring := func(_ context.Context, path string) ([]byte, error) {
		if strings.Contains(path, "continue") {
			return nil, &StatusError{Method: "GET", Path: path, Code: http.StatusGone, Reason: "Expired"}
		}
		return nil, nil
	}
	_, n, err = List(context.Background(), expiring, "/api/v1/pods", nil, p, decode)
	if err == nil || !strings.HasPrefix(err.Error(), "page 2 of the pod list: the continue token expired (410 Gone") || n != 2 {
		t.Errorf("an expired token without restarts: %d requests, %v", n, err)
	}
}
