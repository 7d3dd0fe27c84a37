package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Defaults, chosen against kube-proxy's behaviour: it resyncs every 30s
// (--iptables-sync-period) and rewrites in bursts of a few seconds.
const (
	// DefaultPoll is how often the change stamps are read: each read is
	// one netlink GETGEN and one table-info getsockopt per legacy table.
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

// Config is one watcher's inputs. Stamp, Verify and Publish are the
// outside world; everything else is the schedule.
type Config struct {
	// Stamp returns one string covering every backend's change stamp; a
	// stamp that cannot be read should come back as text naming the
	// error, so a backend appearing or vanishing counts as a move.
	Stamp func(ctx context.Context) string
	// Verify runs one verify; first is set until a run has returned, so
	// the caller can wait for kube-proxy's first sync only then.
	Verify func(ctx context.Context, first bool) (*verify.Result, error)
	// Publish stores a result with the drift state (status.json and the
	// textfiles).
	Publish func(res *verify.Result, drifting bool, transitions int) error
	// Log gets one line per event worth the journal.
	Log func(line string)
	// Heartbeat, when set, is called at start and every HeartbeatEvery
	// while Run runs (see Beat).
	Heartbeat func(now time.Time)

	Poll, Quiet, MaxDelay, Grace, Full time.Duration
	// Sleep is time.Sleep-like and honours ctx (tests may replace it).
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c *Config) defaults() {
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
}

// Run watches until ctx ends, then returns nil. A verify run that errors
// or fails is logged and retried at the next stamp move or full check:
// the watcher never gives up on a node, which is what a first start
// slower than verify.wait needs.
func Run(ctx context.Context, cfg Config) error {
	cfg.defaults()
	if cfg.Heartbeat != nil {
		hctx, stop := context.WithCancel(ctx)
		defer stop()
		go heartbeat(hctx, HeartbeatEvery, cfg.Heartbeat)
	}
	deb := Debounce{Quiet: cfg.Quiet, MaxDelay: cfg.MaxDelay}
	tr := Tracker{Grace: cfg.Grace}
	first := true
	var nextFull time.Time
	for {
		now := time.Now()
		stamp := cfg.Stamp(ctx)
		deb.Observe(now, stamp)
		confirm, confirming := tr.ConfirmAt()
		if first || deb.Due(now) || !now.Before(nextFull) || (confirming && !now.Before(confirm)) {
			wasBad, wasFirst := confirming, first
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
				report(cfg, &tr, end, res, wasBad)
			}
		}
		if err := cfg.Sleep(ctx, cfg.Poll); err != nil {
			return nil
		}
	}
}

// report feeds res to the tracker, logs what changed and publishes it.
func report(cfg Config, tr *Tracker, at time.Time, res *verify.Result, wasBad bool) {
	ev, changed := tr.Observe(at, res)
	switch {
	case changed && ev.Drift:
		cfg.Log(fmt.Sprintf("drift: kube-proxy's rules have been wrong for %s: %s", ev.For.Round(time.Second), summary(ev.Findings)))
	case changed:
		cfg.Log(fmt.Sprintf("recovered: kube-proxy's rules are right again after %s of drift", ev.For.Round(time.Second)))
	case !tr.Synced() && res.Verdict == verify.VerdictFailed:
		cfg.Log(fmt.Sprintf("kube-proxy's rules are not complete yet; verifying again when they change: %s", summary(res.Findings)))
	case !wasBad && res.Verdict == verify.VerdictFailed:
		cfg.Log(fmt.Sprintf("kube-proxy's rules look wrong; checking again in %s before calling it drift (kube-proxy may be resyncing): %s", cfg.Grace, summary(res.Findings)))
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
