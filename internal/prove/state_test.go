package prove

import (
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func result(verdict string) *verify.Result {
	r := &verify.Result{Verdict: verdict, OK: verdict == verify.VerdictOK}
	if verdict == verify.VerdictFailed {
		r.Findings = []verify.Finding{{Kind: "missing", Message: "table ip kube-proxy is missing", Fix: "restart RKE2"}}
	}
	return r
}

func TestDebounceWaitsForQuiet(t *testing.T) {
	d := Debounce{Quiet: 5 * time.Second, MaxDelay: time.Minute}
	d.Observe(at(0), "gen 1")
	if d.Due(at(100)) {
		t.Fatal("the first stamp is the baseline, not a change")
	}
	d.Observe(at(10), "gen 2")
	d.Observe(at(12), "gen 3") // a burst: kube-proxy's restore plus a follow-up sync
	if d.Due(at(16)) {
		t.Fatal("due 4s after the last move, want a quiet 5s first")
	}
	d.Observe(at(16), "gen 3")
	if !d.Due(at(17)) {
		t.Fatal("not due 5s after the last move")
	}
	d.Done("gen 3")
	if d.Due(at(30)) {
		t.Fatal("still due after Done")
	}
}

func TestDebounceMaxDelayUnderChurn(t *testing.T) {
	d := Debounce{Quiet: 5 * time.Second, MaxDelay: time.Minute}
	d.Observe(at(0), "gen 0")
	for s := 1; s < 60; s += 3 {
		d.Observe(at(s), "gen "+time.Duration(s).String())
		if d.Due(at(s)) {
			t.Fatalf("due at %ds while the stamp moves every 3s and MaxDelay is 60s", s)
		}
	}
	d.Observe(at(61), "gen last")
	if !d.Due(at(61)) {
		t.Fatal("a stamp that never settles must still be verified after MaxDelay")
	}
}

func TestDebounceChangeDuringVerify(t *testing.T) {
	d := Debounce{Quiet: 5 * time.Second}
	d.Observe(at(0), "gen 1")
	d.Observe(at(1), "gen 2")
	// verify runs from 6s with baseline gen 2; kube-proxy writes gen 3 meanwhile.
	d.Done("gen 2")
	d.Observe(at(9), "gen 3")
	if !d.Due(at(14)) {
		t.Fatal("a change made while verify ran was lost")
	}
}

func TestTrackerGrace(t *testing.T) {
	tr := Tracker{Grace: 90 * time.Second}
	if _, ok := tr.Observe(at(0), result(verify.VerdictOK), Cause{}); ok {
		t.Fatal("ok on a healthy node is no transition")
	}
	// A resync that leaves rules partial for a moment never alerts.
	if _, ok := tr.Observe(at(10), result(verify.VerdictFailed), Cause{}); ok {
		t.Fatal("drift reported at the first failure")
	}
	if c, ok := tr.ConfirmAt(); !ok || !c.Equal(at(100)) {
		t.Fatalf("ConfirmAt = %v %v, want %v", c, ok, at(100))
	}
	if _, ok := tr.Observe(at(40), result(verify.VerdictOK), Cause{}); ok || tr.Drifting() {
		t.Fatal("a failure mended within the grace became drift")
	}
	if _, ok := tr.ConfirmAt(); ok {
		t.Fatal("nothing to confirm after the rules came back")
	}
	// Wrong for longer than the grace: drift, once, told with the
	// writer of the change the first failing run followed.
	flush := Cause{Writers: []events.Writer{{PID: 4242, Comm: "nft", Origin: events.Origin{Exited: true}, Commits: 1}}}
	tr.Observe(at(100), result(verify.VerdictFailed), flush)
	if _, ok := tr.Observe(at(189), result(verify.VerdictFailed), Cause{Unknown: UnknownNone}); ok {
		t.Fatal("drift 89s into a 90s grace")
	}
	ev, ok := tr.Observe(at(190), result(verify.VerdictFailed), Cause{Unknown: UnknownNone})
	if !ok || !ev.Drift || ev.For != 90*time.Second || len(ev.Findings) != 1 {
		t.Fatalf("at the end of the grace got %+v %v, want drift for 90s with the finding", ev, ok)
	}
	if got := ev.Cause.String(); got != "changed by 4242 (nft, exited)" {
		t.Errorf("drift cause %q, want the first failing run's writer", got)
	}
	if _, ok := tr.Observe(at(300), result(verify.VerdictFailed), Cause{}); ok {
		t.Fatal("drift reported twice")
	}
	// "Cannot tell" neither ends nor starts drift.
	if _, ok := tr.Observe(at(310), result(verify.VerdictUnknown), Cause{}); ok || !tr.Drifting() {
		t.Fatal("an unknown verdict ended drift")
	}
	ev, ok = tr.Observe(at(400), result(verify.VerdictOK), Cause{})
	if !ok || ev.Drift || ev.For != 300*time.Second {
		t.Fatalf("recovery = %+v %v, want recovery after 300s", ev, ok)
	}
	if tr.Drifting() || tr.Transitions() != 2 {
		t.Fatalf("after recovery drifting=%v transitions=%d, want false 2", tr.Drifting(), tr.Transitions())
	}
}

func TestTrackerUnknownDoesNotStartGrace(t *testing.T) {
	tr := Tracker{Grace: time.Second}
	tr.Observe(at(0), result(verify.VerdictUnknown), Cause{})
	if _, ok := tr.Observe(at(100), result(verify.VerdictUnknown), Cause{}); ok || tr.Drifting() {
		t.Fatal("unreadable rules became drift")
	}
	if _, ok := tr.ConfirmAt(); ok {
		t.Fatal("an unknown verdict awaits confirmation")
	}
}

// A first start slower than verify's wait is not drift: failures before
// the first pass are retried and never start the grace.
func TestTrackerSlowFirstStart(t *testing.T) {
	tr := Tracker{Grace: 90 * time.Second}
	for s := 0; s <= 1200; s += 300 {
		if _, ok := tr.Observe(at(s), result(verify.VerdictFailed), Cause{}); ok || tr.Drifting() {
			t.Fatalf("failure at %ds before kube-proxy ever synced became drift", s)
		}
		if _, ok := tr.ConfirmAt(); ok {
			t.Fatal("a failure before the first sync awaits confirmation as drift")
		}
	}
	if _, ok := tr.Observe(at(1300), result(verify.VerdictOK), Cause{}); ok || !tr.Synced() {
		t.Fatal("the first pass is no transition, and marks the node synced")
	}
	tr.Observe(at(1400), result(verify.VerdictFailed), Cause{})
	if ev, ok := tr.Observe(at(1490), result(verify.VerdictFailed), Cause{}); !ok || !ev.Drift {
		t.Fatal("no drift after the first sync and the grace")
	}
}
