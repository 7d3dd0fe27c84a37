package watch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Beat creates the heartbeat empty and moves only its mtime afterwards.
func TestBeatCreatesThenTouches(t *testing.T) {
	root := hostfs.New(t.TempDir())
	first := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{first, first.Add(HeartbeatEvery)} {
		if err := Beat(root, at); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(root.Path(hostfs.WatchHeartbeat))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(at) || fi.Size() != 0 {
			t.Errorf("after a beat at %s: mtime %s, size %d; want that mtime and an empty file", at, fi.ModTime(), fi.Size())
		}
	}
}

// Run beats at once, before its first verify returns: a first verify that
// waits minutes for kube-proxy must not look like a dead watcher.
func TestRunBeatsWhileTheFirstVerifyWaits(t *testing.T) {
	beats := make(chan time.Time, 8)
	runInBackground(t, context.Background(), Config{
		Stamp: func(context.Context) string { return "" },
		Verify: func(ctx context.Context, _ bool) (*verify.Result, error) {
			<-ctx.Done() // a first sync that never comes
			return nil, ctx.Err()
		},
		Publish:   func(*verify.Result, bool, int) error { return nil },
		Log:       func(string) {},
		Heartbeat: func(now time.Time) { beats <- now },
	})
	select {
	case <-beats:
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat while the first verify waited")
	}
}
