// Package sleep is the one context-aware sleep: verify's and watch's
// schedules and the Kubernetes client's backoff all wait with it, so
// every wait in the tool ends when its context does.
package sleep

import (
	"context"
	"time"
)

// Ctx sleeps d or until ctx ends, whichever comes first; ctx's error when
// it ended. A d of zero or less returns at once (with ctx's error, if any).
func Ctx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
