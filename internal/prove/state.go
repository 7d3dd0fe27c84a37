package prove

import (
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Debounce decides when a moved stamp is worth a verify run. kube-proxy
// rewrites its rules in bursts (one restore per sync, several syncs when
// Services churn), so verify waits until the stamp has been still for
// Quiet; a stamp that never settles still gets a run every MaxDelay so a
// busy node is not left unchecked.
type Debounce struct {
	Quiet, MaxDelay time.Duration

	seen      bool
	last      string
	pending   bool
	firstMove time.Time
	lastMove  time.Time
}

// Observe records the stamp read at now.
func (d *Debounce) Observe(now time.Time, stamp string) {
	if !d.seen {
		d.seen, d.last = true, stamp
		return
	}
	if stamp == d.last {
		return
	}
	d.last = stamp
	if !d.pending {
		d.pending, d.firstMove = true, now
	}
	d.lastMove = now
}

// Due says whether a change is pending and has settled (or waited long
// enough) at now.
func (d *Debounce) Due(now time.Time) bool {
	if !d.pending {
		return false
	}
	return now.Sub(d.lastMove) >= d.Quiet || (d.MaxDelay > 0 && now.Sub(d.firstMove) >= d.MaxDelay)
}

// Done marks the pending change as verified: baseline is the stamp read
// just before the verify run, so a change during the run is seen as a new
// move at the next Observe.
func (d *Debounce) Done(baseline string) {
	d.seen, d.last, d.pending = true, baseline, false
}

// Event is a drift transition, one journal line each.
type Event struct {
	// Drift is true when the node starts drifting, false when it recovers.
	Drift bool
	// For is how long the rules had been wrong (Drift) or how long the
	// drift lasted (recovery).
	For time.Duration
	// Findings are the findings of the run that caused the transition
	// (empty on recovery).
	Findings []verify.Finding
	// Cause is who changed the rules before the first failing run of the
	// drift (zero on recovery).
	Cause Cause
}

// Tracker turns verify results into drift with a grace period. Drift is a
// departure from a verified state: failures before the first passing
// result are a slow first start (image pulls on an air-gapped node), which
// verify's own status and the verify-failing alert already report, and
// they are retried, not called drift. After that, a failed result starts
// the grace; only a failed result at least Grace after the first one is
// drift, so a normal kube-proxy resync (its --iptables-sync-period is 30s
// by default) that briefly leaves rules partial never alerts. A result
// that cannot tell (unknown verdict) neither starts nor ends drift: it
// says nothing about the rules.
type Tracker struct {
	Grace time.Duration

	synced      bool
	badSince    time.Time
	bad         bool
	drifting    bool
	driftSince  time.Time
	transitions int
	kubeProxy   syncBaseline
	// cause is the first failing run's, while bad.
	cause Cause
}

// Observe feeds one verify result taken at now, run after the changes
// cause tells of, and returns the transition it causes, if any: drift
// names the cause of the run that first found the rules wrong. It first adds to r what only two runs show: kube-proxy's
// failure counters rising since the previous run (r is then published so).
func (t *Tracker) Observe(now time.Time, r *verify.Result, cause Cause) (Event, bool) {
	t.kubeProxy.judge(now, r)
	switch r.Verdict {
	case verify.VerdictOK:
		t.synced, t.bad = true, false
		if !t.drifting {
			return Event{}, false
		}
		t.drifting = false
		t.transitions++
		return Event{Drift: false, For: now.Sub(t.driftSince)}, true
	case verify.VerdictFailed:
		if !t.synced {
			return Event{}, false
		}
		if !t.bad {
			t.bad, t.badSince, t.cause = true, now, cause
		}
		if t.drifting || now.Sub(t.badSince) < t.Grace {
			return Event{}, false
		}
		t.drifting, t.driftSince = true, t.badSince
		t.transitions++
		return Event{Drift: true, For: now.Sub(t.badSince), Findings: r.Findings, Cause: t.cause}, true
	}
	return Event{}, false
}

// ConfirmAt is when a failed result's grace ends: the watcher verifies
// again then even if no stamp moved, since an unchanged wrong ruleset is
// exactly the drift to report. ok is false when nothing awaits
// confirmation.
func (t *Tracker) ConfirmAt() (at time.Time, ok bool) {
	if !t.bad || t.drifting {
		return time.Time{}, false
	}
	return t.badSince.Add(t.Grace), true
}

// Cause is the cause of the first failing run while the rules are wrong
// (ok false while they are not).
func (t *Tracker) Cause() (c Cause, ok bool) { return t.cause, t.bad }

// Synced reports whether a verify has passed since the watcher started.
func (t *Tracker) Synced() bool { return t.synced }

// Drifting reports whether the node is drifting now.
func (t *Tracker) Drifting() bool { return t.drifting }

// Transitions counts drift starts and recoveries since the watcher started.
func (t *Tracker) Transitions() int { return t.transitions }

// syncBaseline is the last read of kube-proxy's figures a watch run made.
// A run after the first reads kube-proxy's /metrics once (it does not
// wait), so whether kube-proxy's failure counters still rise is told by
// comparing with the run before.
type syncBaseline struct {
	figures *kubeproxy.Figures
	at      time.Time
}

// judge adds to r, a run that ended at now, what rose since the baseline,
// and makes r's read the baseline. A run that could not read the figures
// keeps the older baseline: it says nothing about kube-proxy's counters.
func (b *syncBaseline) judge(now time.Time, r *verify.Result) {
	if r.KubeProxy == nil {
		return
	}
	if b.figures != nil {
		r.AddSyncFailures(b.figures, now.Sub(b.at), now)
	}
	b.figures, b.at = r.KubeProxy, now
}
