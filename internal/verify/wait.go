package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// The wait for kube-proxy's first sync reads the expected backend again
// only when that can show something new, so a node with a large ruleset
// and a kube-proxy that never completes it does not spend a core on verify.
const (
	// readCostFactor spaces reads at least this many times their own
	// duration apart: at most 1/readCostFactor of a core (4%) goes to reads.
	readCostFactor = 25
	// recheckEvery re-reads even with an unchanged stamp, because a legacy
	// stamp can miss a rewrite that keeps every entry count and size.
	recheckEvery = time.Minute
	// DefaultProgressEvery is the most often a waiting verify says what it
	// still misses.
	DefaultProgressEvery = 30 * time.Second
)

// syncWait is the outcome of the wait: the last read of the expected
// backend and what it still lacks.
type syncWait struct {
	live    *rules.Ruleset
	err     error
	missing []Finding
	// note is the judge's word on the layout it used (single-stack, a
	// newer minor), for the report.
	note   string
	synced bool
	reads  int
	// cutShort says the wait ended before the deadline because the next
	// read could not have ended by it.
	cutShort bool
}

// waitForSync reads the expected backend until kube-proxy's skeleton is
// complete or the deadline comes. Between reads it checks the backend's
// change stamp every Poll (when the reader has one) and reads again only
// when the stamp moved, no sooner than readCostFactor times the last read's
// duration after it, and never when that read could not end by the
// deadline.
func waitForSync(ctx context.Context, opts Options, j *judge, deadline time.Time) (syncWait, error) {
	stamper, _ := opts.Reader.(netfilter.Stamper)
	var w syncWait
	nextProgress := opts.Now().Add(opts.ProgressEvery)
	for {
		var stamp string
		var stampErr error
		if stamper != nil {
			// Taken before the read: a change during the read moves it again.
			stamp, stampErr = stamper.Stamp(ctx, opts.Expect)
		}
		began := opts.Now()
		w.live, w.err = opts.Reader.Read(ctx, opts.Expect)
		readEnd := opts.Now()
		cost := readEnd.Sub(began)
		w.reads++
		if w.err == nil {
			w.missing, w.note = j.findings(w.live)
			if len(w.missing) == 0 {
				w.synced = true
				return w, nil
			}
		}
		// Waiting cannot help when the tools are missing or we lack rights.
		if netfilter.IsNotInstalled(w.err) || netfilter.IsPermission(w.err) {
			return w, nil
		}
		for {
			now := opts.Now()
			if !now.Before(deadline) {
				return w, nil
			}
			if opts.Progress != nil && !now.Before(nextProgress) {
				opts.Progress(progressLine(opts, w, deadline.Sub(now)))
				nextProgress = now.Add(opts.ProgressEvery)
			}
			if err := opts.Sleep(ctx, min(opts.Poll, deadline.Sub(now))); err != nil {
				return w, fmt.Errorf("waiting for kube-proxy's first sync: %w", err)
			}
			now = opts.Now()
			if !now.Before(deadline) {
				return w, nil
			}
			if now.Before(readEnd.Add(readCostFactor * cost)) {
				continue
			}
			if !readAgain(ctx, opts, stamper, stamp, stampErr, now.Sub(readEnd)) {
				continue
			}
			if now.Add(cost).After(deadline) {
				w.cutShort = true
				return w, nil
			}
			break
		}
	}
}

// readAgain reports whether a read may show something new: the reader
// has no stamp, or it moved, or the last read is old enough to recheck.
func readAgain(ctx context.Context, opts Options, stamper netfilter.Stamper, stamp string, stampErr error, since time.Duration) bool {
	if stamper == nil || stampErr != nil || since >= recheckEvery {
		return true
	}
	s, err := stamper.Stamp(ctx, opts.Expect)
	return err != nil || s != stamp
}

// progressLine says what the wait still lacks, for the journal.
func progressLine(opts Options, w syncWait, left time.Duration) string {
	what := "the first read failed: " + errText(w.err)
	if w.err == nil {
		const shown = 3
		var msgs []string
		for _, f := range w.missing[:min(shown, len(w.missing))] {
			msgs = append(msgs, f.Message)
		}
		what = strings.Join(msgs, "; ")
		if len(w.missing) > shown {
			what += fmt.Sprintf("; and %d more finding(s)", len(w.missing)-shown)
		}
	}
	return fmt.Sprintf("still waiting for kube-proxy's first sync in %s (%s left, %d read(s) so far): %s",
		opts.Expect, left.Round(time.Second), w.reads, strings.ReplaceAll(what, "\n", " "))
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
