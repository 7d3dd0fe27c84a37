package prove

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Defaults, chosen against kube-proxy's behaviour: it resyncs every 30s
// (--iptables-sync-period) and rewrites in bursts of a few seconds.
const (
	// DefaultPoll is how often the change stamps are read: with nf_tables
	// events only legacy's (one table-info getsockopt per legacy table),
	// without them also one netlink GETGEN.
	DefaultPoll = 3 * time.Second
	// DefaultQuiet is how long a stamp must stay still before verify runs.
	DefaultQuiet = 5 * time.Second
	// DefaultMaxDelay bounds the wait for a stamp that never settles.
	DefaultMaxDelay = time.Minute
	// DefaultGrace is how long rules may stay wrong before it is drift:
	// three of kube-proxy's default resync periods.
	DefaultGrace = 90 * time.Second
	// DefaultFull is the slow periodic verify that catches what the
	// stamps miss (a legacy rewrite keeping every count and size, or
	// kube-proxy's proxy mode, which no stamp covers).
	DefaultFull = 10 * time.Minute
)

// loopConfig is one watcher's inputs. Stamp, Wake, Verify and Publish are the
// outside world; everything else is the schedule.
type loopConfig struct {
	// Stamp returns one string covering every backend's change stamp; a
	// stamp that cannot be read should come back as text naming the
	// error, so a backend appearing or vanishing counts as a move.
	Stamp func(ctx context.Context) string
	// Wake, when set, delivers nf_tables changes (nftables and
	// iptables-nft), already debounced: each one runs verify. While it is
	// open only PolledStamp (what events do not cover: legacy) is polled.
	// When it closes (the subscription failed; WakeErr says why) watch
	// logs it and polls Stamp again.
	Wake        <-chan events.Change
	PolledStamp func(ctx context.Context) string
	WakeErr     func() error
	// Subscribe, when set and Wake is not, is asked for the nf_tables
	// events again whenever the polled stamps move: it answers (nil, nil)
	// while nf_tables is not loaded (subscribing would load it; loading
	// it moves the stamps). A subscription then serves as Wake; an error
	// leaves watch polling.
	Subscribe func(ctx context.Context) (*events.Subscription, error)
	// Verify runs one verify; first is set until a run has returned, so
	// the caller can wait for kube-proxy's first sync only then.
	Verify func(ctx context.Context, first bool) (*verify.Result, error)
	// Publish stores a result with the drift state (status.json and the
	// textfiles).
	Publish func(res *verify.Result, drifting bool, transitions int) error
	// Log gets one line per event worth the journal.
	Log func(line string)
	// Heartbeat, when set, is called at start and every hostfs.WatchHeartbeatEvery
	// while Run runs (see Beat).
	Heartbeat func(now time.Time)

	Poll, Quiet, MaxDelay, Grace, Full time.Duration
	// Sleep is time.Sleep-like and honours ctx (tests may replace it).
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c *loopConfig) defaults() {
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Quiet <= 0 {
		c.Quiet = DefaultQuiet
	}
	if c.Full <= 0 {
		c.Full = DefaultFull
	}
	if c.Sleep == nil {
		c.Sleep = verify.SleepCtx
	}
	if c.PolledStamp == nil {
		c.PolledStamp = func(context.Context) string { return "" }
	}
}

// loop watches until ctx ends, then returns nil. A verify run that errors
// or fails is logged and retried at the next stamp move or full check:
// the watcher never gives up on a node, which is what a first start
// slower than verify.wait needs.
func loop(ctx context.Context, cfg loopConfig) error {
	cfg.defaults()
	if cfg.Heartbeat != nil {
		hctx, stop := context.WithCancel(ctx)
		defer stop()
		go heartbeat(hctx, hostfs.WatchHeartbeatEvery, cfg.Heartbeat)
	}
	deb := Debounce{Quiet: cfg.Quiet, MaxDelay: cfg.MaxDelay}
	tr := Tracker{Grace: cfg.Grace}
	first, woke := true, false
	wake, stampOf := cfg.Wake, cfg.Stamp
	subscribe := cfg.Subscribe
	if wake != nil {
		stampOf, subscribe = cfg.PolledStamp, nil
	}
	var nextFull time.Time
	var asked string
	// since holds the nf_tables changes (and their writers) since the
	// last verify run: the cause a failing run is told with.
	var since events.Change
	for {
		now := time.Now()
		stamp := stampOf(ctx)
		if subscribe != nil && !first && stamp != asked {
			asked = stamp
			switch sub, err := subscribe(ctx); {
			case err != nil:
				cfg.Log(fmt.Sprintf("cannot subscribe to nftables change events (%v), so polling every backend's stamp every %s", err, cfg.Poll))
				subscribe = nil
			case sub != nil:
				cfg.Log(fmt.Sprintf("nf_tables is loaded now: nftables and iptables-nft changes by netlink events, legacy stamps every %s", cfg.Poll))
				wake, cfg.WakeErr, stampOf, subscribe, woke = sub.C, sub.Err, cfg.PolledStamp, nil, true
				deb = Debounce{Quiet: cfg.Quiet, MaxDelay: cfg.MaxDelay}
				stamp = stampOf(ctx)
			}
		}
		asked = cmp.Or(asked, stamp)
		deb.Observe(now, stamp)
		confirm, confirming := tr.ConfirmAt()
		if first || woke || deb.Due(now) || !now.Before(nextFull) || (confirming && !now.Before(confirm)) {
			woke = false
			wasBad, wasFirst := confirming, first
			cause := causeOf(since, wake != nil)
			since = events.Change{}
			res, err := cfg.Verify(ctx, first)
			if ctx.Err() != nil {
				return nil
			}
			end := time.Now()
			deb.Done(stamp)
			nextFull = end.Add(cfg.Full)
			first = false
			if err != nil {
				cfg.Log(fmt.Sprintf("verify could not run (retrying at the next rule change or in %s): %v", cfg.Full, err))
			} else {
				if wasFirst {
					cfg.Log(fmt.Sprintf("first verify: %s in %s", res.Verdict, res.Duration.Round(time.Millisecond)))
				}
				report(cfg, &tr, end, res, wasBad, cause.forBackend(res.Expect))
			}
		}
		if wake == nil {
			if err := cfg.Sleep(ctx, cfg.Poll); err != nil {
				return nil
			}
			continue
		}
		var open bool
		var ch events.Change
		if ch, woke, open = waitWake(ctx, wake, cfg.Poll); ctx.Err() != nil {
			return nil
		}
		since = events.Merge(since, ch)
		if !open {
			// Polling every backend from here on: a fresh baseline, and
			// one verify for what changed since the last event.
			cfg.Log(fmt.Sprintf("nftables change events stopped (%v); polling every backend's stamp every %s instead", wakeErr(cfg), cfg.Poll))
			wake, stampOf, woke = nil, cfg.Stamp, true
			deb = Debounce{Quiet: cfg.Quiet, MaxDelay: cfg.MaxDelay}
		}
	}
}

// waitWake waits up to poll for an nf_tables change. open is false when
// wake closed.
func waitWake(ctx context.Context, wake <-chan events.Change, poll time.Duration) (ch events.Change, woke, open bool) {
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return events.Change{}, false, true
	case ch, open = <-wake:
		return ch, open, open
	case <-t.C:
		return events.Change{}, false, true
	}
}

func wakeErr(cfg loopConfig) error {
	if cfg.WakeErr == nil || cfg.WakeErr() == nil {
		return errors.New("the subscription ended")
	}
	return cfg.WakeErr()
}

// report feeds res, run after the changes cause tells of, to the tracker,
// logs what changed and publishes it.
func report(cfg loopConfig, tr *Tracker, at time.Time, res *verify.Result, wasBad bool, cause Cause) {
	ev, changed := tr.Observe(at, res, cause)
	if c, bad := tr.Cause(); bad && res.Verdict == verify.VerdictFailed {
		c.mark(res)
	}
	switch {
	case changed && ev.Drift:
		cfg.Log(fmt.Sprintf("drift: kube-proxy's rules have been wrong for %s (%s): %s", ev.For.Round(time.Second), ev.Cause, summary(ev.Findings)))
	case changed:
		cfg.Log(fmt.Sprintf("recovered: kube-proxy's rules are right again after %s of drift", ev.For.Round(time.Second)))
	case !tr.Synced() && res.Verdict == verify.VerdictFailed:
		cfg.Log(fmt.Sprintf("kube-proxy's rules are not complete yet; verifying again when they change: %s", summary(res.Findings)))
	case !wasBad && res.Verdict == verify.VerdictFailed:
		cfg.Log(fmt.Sprintf("kube-proxy's rules look wrong (%s); checking again in %s before calling it drift (kube-proxy may be resyncing): %s", cause, cfg.Grace, summary(res.Findings)))
	}
	if err := cfg.Publish(res, tr.Drifting(), tr.Transitions()); err != nil {
		cfg.Log(err.Error())
	}
}

// summary puts the first findings and their fixes on one line: a journal
// line per transition must say what to do.
func summary(fs []verify.Finding) string {
	const show = 3
	var parts []string
	for i, f := range fs {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more (rke2-proxy-backend verify lists them)", len(fs)-show))
			break
		}
		parts = append(parts, f.Message+" (fix: "+f.Fix+")")
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, "; ")
}
