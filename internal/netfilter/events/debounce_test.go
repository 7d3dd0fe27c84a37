package events

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// A burst is delivered once, after the quiet period, merged; constant
// churn is still delivered at MaxDelay; closing raw flushes what is
// pending and closes out.
func TestDebounce(t *testing.T) {
	// The burst's gaps (quiet/4) must stay under quiet however loaded the
	// machine: at 100 ms a 75 ms stall split the burst on a loaded CI host.
	const quiet = 400 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	raw := make(chan Change, 1)
	out := make(chan Change, 1)
	go debounce(ctx, Options{Quiet: quiet, MaxDelay: 4 * quiet}, raw, out)

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
	case <-time.After(10 * quiet):
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
	if c := <-ch; !reflect.DeepEqual(c, Change{Generation: 6, Commits: 3, Overrun: true}) {
		t.Errorf("merged %+v", c)
	}
}

// Merging keeps each process once, last writer last, with its commits
// summed; beyond MaxWriters the oldest are counted, not kept.
func TestMergeBoundsWriters(t *testing.T) {
	ch := make(chan Change, 1)
	kp := Writer{PID: 7, Comm: "kube-proxy", Origin: Origin{PodUID: "u"}, Commits: 1}
	send(ch, Change{Commits: 1, Writers: []Writer{kp}})
	for i := range 2 * MaxWriters {
		send(ch, Change{Commits: 1, Writers: []Writer{{PID: uint32(100 + i), Comm: "nft", Origin: Origin{Exited: true}, Commits: 1}}})
	}
	send(ch, Change{Commits: 1, Writers: []Writer{{PID: 7, Comm: "kube-proxy", Origin: Origin{Exited: true}, Commits: 1}}})
	c := <-ch
	if len(c.Writers) != MaxWriters || c.OtherWriters != MaxWriters+2 || c.Commits != 2*MaxWriters+2 {
		t.Fatalf("%d writers, %d others, %d commits; want %d, %d, %d", len(c.Writers), c.OtherWriters, c.Commits, MaxWriters, MaxWriters+2, 2*MaxWriters+2)
	}
	last := c.Writers[MaxWriters-1]
	if !last.same(kp) || last.Commits != 1 || !last.Exited {
		t.Errorf("last writer %+v, want kube-proxy (its first was pushed out) as seen last", last)
	}
	if first := c.Writers[0]; first.PID != 100+MaxWriters+1 {
		t.Errorf("oldest kept writer %+v, want pid %d", first, 100+MaxWriters+1)
	}
	// The same process twice in a row: one entry, its live origin kept.
	c = Change{}
	addWriters(&c, []Writer{kp, {PID: 7, Comm: "kube-proxy", Origin: Origin{Exited: true}, Commits: 1}})
	if len(c.Writers) != 1 || c.Writers[0].Commits != 2 || c.Writers[0].PodUID != "u" {
		t.Errorf("%+v, want one kube-proxy with 2 commits in pod u", c.Writers)
	}
}
