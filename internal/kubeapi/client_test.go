package kubeapi

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
)

// TestClientAgainstAPIServer runs the client with a node's credentials
// against a real kube-apiserver with NodeRestriction: it reads and
// patches its own Node (a condition by strategic merge, which keeps the
// others; an annotation by merge patch), is refused another node's with
// a StatusError IsForbidden knows and without retrying, keeps its rate
// limit, and refuses an answer over its cap.
func TestClientAgainstAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	api.RegisterNode("node-b")
	creds, err := Load(hostfs.New("/"), api.NodeKubeconfig("node-a"))
	if err != nil {
		t.Fatal(err)
	}
	interval := 300 * time.Millisecond
	c, err := New(creds, Options{Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	for _, cond := range []string{"A", "B"} {
		patch := `{"status":{"conditions":[{"type":"` + cond + `","status":"True","reason":"R","message":"m"}]}}`
		if _, err := c.Patch(ctx, "/api/v1/nodes/node-a/status", StrategicMerge, []byte(patch)); err != nil {
			t.Fatalf("patching node-a's status: %v", err)
		}
	}
	if _, err := c.Patch(ctx, "/api/v1/nodes/node-a", MergePatch, []byte(`{"metadata":{"annotations":{"example.test/a":"1"}}}`)); err != nil {
		t.Fatalf("annotating node-a: %v", err)
	}
	if took := time.Since(start); took < 2*interval {
		t.Errorf("3 requests in %s, under the rate limit's 2×%s", took, interval)
	}
	n := api.Node("node-a")
	if _, a := n.Condition("A"); !a || n.Annotations["example.test/a"] != "1" {
		t.Errorf("node-a after the patches: %+v: want conditions A and B and the annotation", n)
	}
	if _, b := n.Condition("B"); !b {
		t.Errorf("node-a after the patches: %+v: the second condition's patch dropped the first", n)
	}

	start = time.Now()
	_, err = c.Patch(ctx, "/api/v1/nodes/node-b", MergePatch, []byte(`{"metadata":{"annotations":{"example.test/a":"1"}}}`))
	if !IsForbidden(err) || !strings.Contains(err.Error(), "node-a") {
		t.Fatalf("node-a patching node-b: %v, want 403 from NodeRestriction", err)
	}
	if took := time.Since(start); took > 2*interval+time.Second {
		t.Errorf("a 403 took %s: it was retried", took)
	}

	small, _ := New(creds, Options{MaxBody: 100})
	if _, err := small.Get(ctx, "/api/v1/nodes/node-a"); err == nil || !strings.Contains(err.Error(), "over 100 bytes") {
		t.Errorf("an answer over MaxBody: %v", err)
	}
}

// With no API server listening, a call tries Attempts times with the
// backoff doubling between them, then fails with the connection's error.
func TestClientRetriesThenFails(t *testing.T) {
	c, err := New(Credentials{File: "test", Server: "https://" + apiserver.RefusedAddr(t), Token: "t"}, Options{Attempts: 3, Backoff: 100 * time.Millisecond, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Get(context.Background(), "/api/v1/nodes/x")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("got %v, want connection refused", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("3 attempts in %s: want backoffs of 100ms and 200ms between them", took)
	}
}
