package prove

import (
	"context"
	"fmt"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Beat refreshes the heartbeat: the file's mtime is the beat, its content
// stays empty. status.json cannot carry it: it is byte-stable (no
// timestamps, and the atomic writer leaves an unchanged file's mtime
// alone), so on a quiet node its age says when verify last found
// something new, not whether anyone still looks. A separate empty file
// keeps that rule and costs one utimensat per beat.
//
// The beat never follows a link and replaces anything at the path that
// is not a regular file (hostfs.Root.Touch).
func Beat(root hostfs.Root, now time.Time) error {
	if err := root.Touch(hostfs.WatchHeartbeat, now); err != nil {
		return fmt.Errorf("heartbeat %w (check will call the status stale)", err)
	}
	return nil
}

// heartbeat calls beat at once and then every period until ctx ends. It
// runs beside the watch loop rather than in it: the first verify may wait
// minutes for kube-proxy's first sync, and the heartbeat says the watcher
// is alive, while status.json says what it last found.
func heartbeat(ctx context.Context, period time.Duration, beat func(time.Time)) {
	beat(time.Now())
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			beat(now)
		}
	}
}
