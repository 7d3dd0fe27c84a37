package proof

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func okResult() *verify.Result {
	return &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: backend.IptablesNFT}
}

// A heartbeat dated in the future (the clock stepped back since a watch
// that is now dead last beat) vouches for nothing: unknown, beyond a small
// skew (issue 19 item 9: check answered 0 from a dead watch's status).
func TestCheckRefusesAHeartbeatFromTheFuture(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), okResult())
	now := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ahead time.Duration
		want  Status
		says  string
	}{
		{2 * time.Second, OK, "complete"},
		{MaxClockSkew, OK, "complete"},
		{10 * time.Minute, Unknown, "cannot tell: watch's last heartbeat is dated 10m0s in the future (the clock stepped back?)"},
	} {
		if err := root.Touch(hostfs.WatchHeartbeat, now.Add(tc.ahead)); err != nil {
			t.Fatal(err)
		}
		if v := Check(root, CheckOptions{MaxAge: DefaultMaxAge, Now: now}); v.Status != tc.want || !strings.Contains(v.Message, tc.says) {
			t.Errorf("heartbeat %s ahead: %s %q; want %s containing %q", tc.ahead, v.Status, v.Message, tc.want, tc.says)
		}
	}
}

// A heartbeat path that is not a regular file is judged by nobody's
// mtime: a link to a busy log file would look like a live watch.
func TestCheckRefusesAHeartbeatThatIsNotAFile(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), okResult())
	log := filepath.Join(root.Dir(), "busy.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	beat := root.Path(hostfs.WatchHeartbeat)
	if err := os.Symlink("/busy.log", beat); err != nil {
		t.Fatal(err)
	}
	v := Check(root, CheckOptions{MaxAge: DefaultMaxAge})
	if v.Status != Unknown || !strings.Contains(v.Message, "is not a regular file") {
		t.Errorf("heartbeat is a link to a fresh file: %s %q; want unknown", v.Status, v.Message)
	}
	os.Remove(beat)
	if err := syscall.Mkfifo(beat, 0o644); err != nil {
		t.Fatal(err)
	}
	if v := Check(root, CheckOptions{MaxAge: DefaultMaxAge}); v.Status != Unknown {
		t.Errorf("heartbeat is a FIFO: %s %q; want unknown", v.Status, v.Message)
	}
}

// A status without a schema, or with one this check does not know, is
// refused by name, never judged.
func TestCheckRefusesAnUnknownSchema(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), nil)
	for content, says := range map[string]string{
		`{"ok": true, "verdict": "ok", "expect": "iptables-nft", "findings": []}`:              "has no schema (an older rke2-proxy-backend wrote it)",
		`{"schema": 2, "ok": true, "verdict": "ok", "expect": "iptables-nft", "findings": []}`: "has schema 2, this check reads schema 1",
		`{"schema": "1", "ok": true}`: "is not verify's JSON",
	} {
		if err := os.WriteFile(root.Path(hostfs.StatusFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if v := Check(root, CheckOptions{}); v.Status != Unknown || !strings.Contains(v.Message, says) {
			t.Errorf("%s: %s %q; want unknown containing %q", content, v.Status, v.Message, says)
		}
	}
}

// A verify run that cannot store its result (here a figure JSON cannot
// hold) invalidates the previous one: check says unknown, never the old
// OK (issue 19 item 7).
func TestAFailedStatusWriteInvalidatesTheLastOne(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), okResult())
	if v := Check(root, CheckOptions{}); v.Status != OK {
		t.Fatalf("before: %s %q", v.Status, v.Message)
	}
	broken := &verify.Result{Verdict: verify.VerdictFailed, Expect: backend.IptablesNFT,
		Findings:  []verify.Finding{{Kind: verify.KindMissingTable, Backend: backend.IptablesNFT, Message: "every rule flushed"}},
		KubeProxy: &kubeproxy.Figures{ServiceChanges: math.NaN()}}
	err := WriteStatus(root, broken)
	if err == nil {
		t.Fatal("a result JSON cannot hold was stored")
	}
	v := Check(root, CheckOptions{})
	if v.Status != Unknown || !strings.Contains(v.Message, "cannot tell: the last verify run left no result") {
		t.Errorf("after a run that could not store its result: %s %q; want unknown", v.Status, v.Message)
	}
}

// A verify run marks itself before it judges (BeginRun) and clears
// the mark once its result is stored. check trusts status.json while no
// mark is left, or while a live run holds one (status.json is then the
// last finished run's); a mark no process holds is a run that ended
// without storing its result, killed or unable to write, and check
// cannot tell (issue 31 item 9: check kept answering the last OK).
func TestCheckRefusesAStatusALaterRunCouldNotReplace(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), okResult())
	say := func(when string, want Status, says string) {
		t.Helper()
		if v := Check(root, CheckOptions{}); v.Status != want || !strings.Contains(v.Message, says) {
			t.Errorf("%s: %s %q; want %s containing %q", when, v.Status, v.Message, want, says)
		}
	}
	say("no run since the last result", OK, "complete")
	run, err := BeginRun(root)
	if err != nil {
		t.Fatal(err)
	}
	say("a run under way", OK, "complete")
	// The run could neither store nor invalidate: its mark stays, unheld
	// once the process is gone (here: closed).
	if err := run.End(fmt.Errorf("write status: %w", ErrStatusStands)); err != nil {
		t.Fatal(err)
	}
	say("a run that ended without storing its result", Unknown, "cannot tell: a verify run started at ")
	// The next run that stores its result clears it.
	next, err := BeginRun(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteStatus(root, okResult()); err != nil {
		t.Fatal(err)
	}
	if err := next.End(nil); err != nil {
		t.Fatal(err)
	}
	say("the next run stored its result", OK, "complete")
}
