package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// HeartbeatEvery is how often a running watch refreshes
// hostfs.WatchHeartbeat. check's default --max-age is a few of these.
const HeartbeatEvery = 30 * time.Second

// Beat refreshes the heartbeat: the file's mtime is the beat, its content
// stays empty. status.json cannot carry it: it is byte-stable (no
// timestamps, and the atomic writer leaves an unchanged file's mtime
// alone), so on a quiet node its age says when verify last found
// something new, not whether anyone still looks. A separate empty file
// keeps that rule and costs one utimensat per beat.
//
// The beat never follows a link: utimensat with AT_SYMLINK_NOFOLLOW, so a
// link swapped in at any moment gets its own times set, never its
// target's. Anything at the path that is not a regular file (a planted
// link, a FIFO) is replaced, atomically, by watch's own empty file.
func Beat(root hostfs.Root, now time.Time) error {
	p, err := root.ResolveEntry(hostfs.WatchHeartbeat)
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w", root.Path(hostfs.WatchHeartbeat), err)
	}
	fi, err := os.Lstat(p)
	if err == nil && !fi.Mode().IsRegular() || errors.Is(err, fs.ErrNotExist) {
		// WriteFileAtomic renames over the last component: a link there
		// is replaced, not followed.
		_, err = root.WriteFileAtomic(hostfs.WatchHeartbeat, nil, 0o644)
	}
	if err == nil {
		ts := []unix.Timespec{unix.NsecToTimespec(now.UnixNano()), unix.NsecToTimespec(now.UnixNano())}
		err = unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fmt.Errorf("heartbeat %s: %w (check will call the status stale)", p, err)
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
