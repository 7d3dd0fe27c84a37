package events

import (
	"context"
	"time"
)

// debounce delivers what arrives on raw to out once raw has been quiet for
// opts.Quiet, or opts.MaxDelay after the first undelivered change. It
// closes out when raw closes (after delivering what is pending) or ctx
// ends.
func debounce(ctx context.Context, opts Options, raw <-chan Change, out chan Change) {
	defer close(out)
	var (
		pending  Change
		have     bool
		quiet    = time.NewTimer(time.Hour)
		deadline <-chan time.Time
	)
	quiet.Stop()
	defer quiet.Stop()
	flush := func() {
		if have {
			send(out, pending)
		}
		pending, have, deadline = Change{}, false, nil
		quiet.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-raw:
			if !ok {
				flush()
				return
			}
			if !have && opts.MaxDelay > 0 {
				deadline = time.After(opts.MaxDelay)
			}
			pending, have = merge(pending, c), true
			quiet.Reset(opts.Quiet)
		case <-quiet.C:
			flush()
		case <-deadline:
			flush()
		}
	}
}
