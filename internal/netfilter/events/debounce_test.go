package events

import (
	"context"
	"testing"
	"time"
)

// A burst is delivered once, after the quiet period, merged; constant
// churn is still delivered at MaxDelay; closing raw flushes what is
// pending and closes out.
func TestDebounce(t *testing.T) {
	const quiet = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	raw := make(chan Change, 1)
	out := make(chan Change, 1)
	go debounce(ctx, Options{Quiet: quiet, MaxDelay: 600 * time.Millisecond}, raw, out)

	start := time.Now()
	for gen := uint32(1); gen <= 3; gen++ {
		raw <- Change{Generation: gen, Commits: 1}
		time.Sleep(quiet / 4)
	}
	c := <-out
	if c.Commits != 3 || c.Generation != 3 {
		t.Errorf("burst delivered as %+v, want 3 commits ending at generation 3", c)
	}
	if d := time.Since(start); d < quiet {
		t.Errorf("delivered %s after the burst began, before the quiet period", d)
	}

	// Churn every quiet/2 never settles: MaxDelay delivers anyway.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for gen := uint32(10); ; gen++ {
			select {
			case <-stop:
				return
			case raw <- Change{Generation: gen, Commits: 1}:
			}
			time.Sleep(quiet / 2)
		}
	}()
	select {
	case c := <-out:
		if c.Commits < 2 {
			t.Errorf("churn delivered as %+v", c)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("constant churn was never delivered")
	}
	close(stop)
	<-stopped

	close(raw)
	for range out { // drains what the churn left, then sees out closed
	}
}

func TestSendMergesIntoAPendingChange(t *testing.T) {
	ch := make(chan Change, 1)
	send(ch, Change{Generation: 4, Commits: 1})
	send(ch, Change{Overrun: true})
	send(ch, Change{Generation: 6, Commits: 2})
	if c := <-ch; c != (Change{Generation: 6, Commits: 3, Overrun: true}) {
		t.Errorf("merged %+v", c)
	}
}
