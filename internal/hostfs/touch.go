package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Touch sets hostPath's times to now, creating it empty when missing. It
// never follows a link: utimensat with AT_SYMLINK_NOFOLLOW, so a link
// swapped in at any moment gets its own times set, never its target's;
// anything at the path that is not a regular file (a planted link, a
// FIFO) is first replaced, atomically, by an empty regular file. It is
// watch's heartbeat (WatchHeartbeat), and what check's tests beat with.
func (r Root) Touch(hostPath string, now time.Time) error {
	p, err := r.ResolveEntry(hostPath)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(p)
	if err == nil && !fi.Mode().IsRegular() || errors.Is(err, fs.ErrNotExist) {
		// WriteFileAtomic renames over the last component: a link there
		// is replaced, not followed.
		_, err = r.WriteFileAtomic(hostPath, nil, 0o644)
	}
	if err == nil {
		ts := []unix.Timespec{unix.NsecToTimespec(now.UnixNano()), unix.NsecToTimespec(now.UnixNano())}
		err = unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}
