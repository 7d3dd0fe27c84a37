package switchover

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
)

// ApplyLock is the NodeLock: apply's own lock, taken with role "switch".
type ApplyLock struct {
	Locking apply.Locking
	release func()
	taken   bool
}

// Lock takes it, waiting (up to Locking.Wait) for an apply but, the first
// time, not for another switch: that one may hold it for minutes, and two
// switches must not both run. Taken back after a restart it waits for any
// holder: a second switch may hold it for the moment it takes to read the
// journal and refuse.
func (l *ApplyLock) Lock(ctx context.Context) error {
	l.Locking.Role = "switch"
	l.Locking.WaitFor = nil
	if !l.taken {
		l.Locking.WaitFor = func(role string) bool { return role != "switch" }
	}
	release, err := apply.Lock(ctx, l.Locking)
	if err != nil {
		return err
	}
	l.release, l.taken = release, true
	return nil
}

func (l *ApplyLock) Unlock() {
	if l.release != nil {
		l.release()
		l.release = nil
	}
}
