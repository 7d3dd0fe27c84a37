package prove

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// background runs run until the returned stop is called, which cancels
// it and returns run's error (stop may be called again).
func background(ctx context.Context, run func(context.Context) error) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
}

// runInBackground runs loop(ctx, cfg) until the test ends, then cancels it
// and fails t if Run returned an error.
func runInBackground(t *testing.T, ctx context.Context, cfg loopConfig) {
	stop := background(ctx, func(ctx context.Context) error { return loop(ctx, cfg) })
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// onHostInBackground runs OnHost until the returned stop is called, which
// returns OnHost's error (stop may be called again).
func onHostInBackground(c *Command, s Schedule) (stop func() error) {
	return background(context.Background(), func(ctx context.Context) error { return c.Watch(ctx, s) })
}

// poll checks cond every 20ms until it holds (true) or limit has passed
// (false).
func poll(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// eventually waits until the file f under root exists and holds want.
func eventually(t *testing.T, root hostfs.Root, f, want string) {
	t.Helper()
	var data []byte
	var err error
	if !poll(20*time.Second, func() bool {
		data, err = root.ReadFile(f)
		return err == nil && strings.Contains(string(data), want)
	}) {
		t.Fatalf("%s never held %q; last: %v\n%s", f, want, err, data)
	}
}

// journal collects the watcher's lines and published states.
type journal struct {
	mu        sync.Mutex
	lines     []string
	published []string // verdict, plus "+drift" while drifting
}

func (j *journal) log(line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, line)
}

func (j *journal) publish(res *verify.Result, drifting bool, _ int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := res.Verdict
	if drifting {
		s += "+drift"
	}
	j.published = append(j.published, s)
	return nil
}

// waitFor polls until cond holds on the journal, or fails after limit.
func (j *journal) waitFor(t *testing.T, what string, limit time.Duration, cond func(lines, published []string) bool) time.Time {
	t.Helper()
	if poll(limit, func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return cond(j.lines, j.published)
	}) {
		return time.Now()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	t.Fatalf("no %s within %s; lines:\n%s\npublished: %v", what, limit, strings.Join(j.lines, "\n"), j.published)
	return time.Time{}
}

func hasLine(prefix string) func(lines, _ []string) bool {
	return func(lines, _ []string) bool {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
		return false
	}
}
