package prove

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Beat creates the heartbeat empty and moves only its mtime afterwards.
func TestBeatCreatesThenTouches(t *testing.T) {
	root := hostfs.New(t.TempDir())
	first := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{first, first.Add(hostfs.WatchHeartbeatEvery)} {
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
	runInBackground(t, context.Background(), loopConfig{
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

// Whatever sits at the heartbeat path that is not a regular file (a
// symlink planted there, a FIFO) is replaced by watch's own empty file,
// and a link's target is never touched (issue 19 item 12: watch followed
// a planted link and bumped the target's timestamps every 30s).
func TestBeatNeverFollowsWhatIsPlantedThere(t *testing.T) {
	dir := t.TempDir()
	root := hostfs.New(dir)
	beat := root.Path(hostfs.WatchHeartbeat)
	target := filepath.Join(dir, "var/log/precious.log")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(beat), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"/var/log/precious.log", target, "../../var/log/precious.log"} {
		os.Remove(beat)
		if err := os.Symlink(link, beat); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
		if err := Beat(root, now); err != nil {
			t.Fatalf("link to %s: %v", link, err)
		}
		if fi, err := os.Stat(target); err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("link to %s: the link's target was touched: %v %v", link, fi.ModTime(), err)
		}
		fi, err := os.Lstat(beat)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || !fi.ModTime().Equal(now) {
			t.Fatalf("link to %s: heartbeat after the beat: %v %v; want an empty regular file dated %s", link, fi, err, now)
		}
	}
	// A FIFO is replaced too, without opening it (which would block).
	os.Remove(beat)
	if err := syscall.Mkfifo(beat, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 19, 1, 0, 0, time.UTC)
	if err := Beat(root, at); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(beat); err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Equal(at) {
		t.Errorf("FIFO at the heartbeat path not replaced: %v %v", fi, err)
	}
}

// A heartbeat that is a link to a fresh file says no watch runs: the
// link's target's mtime is someone else's, as check judges it too.
func TestWatchRunsIgnoresALinkedHeartbeat(t *testing.T) {
	root := hostfs.New(t.TempDir())
	if err := Beat(root, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !watchRuns(root) {
		t.Fatal("a fresh heartbeat: watchRuns says no watch runs")
	}
	hb := root.Path(hostfs.WatchHeartbeat)
	log := filepath.Join(filepath.Dir(hb), "some.log")
	if err := os.Rename(hb, log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("some.log", hb); err != nil {
		t.Fatal(err)
	}
	if watchRuns(root) {
		t.Error("a heartbeat that links to a fresh file: watchRuns says a watch runs")
	}
}
