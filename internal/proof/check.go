package proof

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Status is the verdict's, in node-problem-detector's custom-plugin
// protocol (pkg/custompluginmonitor/types/types.go: OK 0, NonOK 1, Unknown
// 2); the check's exit code is this number.
type Status int

const (
	OK      Status = 0
	Problem Status = 1
	Unknown Status = 2
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Problem:
		return "problem"
	}
	return "unknown"
}

// MaxMessage bounds the message in bytes. NPD cuts a plugin's output at its
// max_output_length (80 by default) mid-word; the shipped monitor config
// raises that to this value so the message arrives whole.
const MaxMessage = 160

// MaxClockSkew is how far in the future the heartbeat may be dated before
// check stops trusting it: watch dates each beat with the clock, so a beat
// from the future means the clock stepped back since, and the beat's age
// says nothing about whether watch still runs.
const MaxClockSkew = 5 * time.Second

// Verdict is the check's answer.
type Verdict struct {
	Status  Status
	Message string
}

// DefaultMaxAge is check's default --max-age: four of watch's heartbeats,
// so one late beat (a loaded node) is not called stale.
const DefaultMaxAge = 4 * hostfs.WatchHeartbeatEvery

// CheckOptions tune one check.
type CheckOptions struct {
	// MaxAge is how old the watch heartbeat may be before the status is
	// stale (0: no age limit).
	MaxAge time.Duration
	// Now is the time to judge ages against (zero: the clock).
	Now time.Time
}

// Check reads the plan and verify's status under root and judges them:
// node-problem-detector's plugin, the one reader of status.json (a run
// judges its own result in memory, Of). It never reads netfilter: NPD
// runs it every invoke_interval, and re-reading kube-proxy's rules that
// often is the cost status.json exists to avoid.
//
// A status that verified another backend than the plan now names is
// stale: RKE2 restarted onto a new choice and verify has not finished.
// Age is judged by the watch service's heartbeat (hostfs.WatchHeartbeat),
// never by status.json's own mtime: the atomic writer leaves an unchanged
// file's mtime alone (status.json is byte-stable between runs on an
// unchanged node), so an old status.json is no sign of a dead watcher,
// while a heartbeat older than MaxAge is. With no heartbeat at all no
// watch ran this boot (a node that only runs the verify unit at each RKE2
// start), and status.json is as fresh as it gets there.
func Check(root hostfs.Root, opts CheckOptions) Verdict {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	return tidy(checkStored(root, opts))
}

func checkStored(root hostfs.Root, opts CheckOptions) Verdict {
	p, planErr := plan.Read(root)
	if v, judged := planVerdict(root, p, planErr); judged {
		return v
	}
	if v, stale := staleWatch(root, opts); stale {
		return v
	}
	if v, unwritable := readOnly(root); unwritable {
		return v
	}
	if v, unfinished := unfinishedRun(root); unfinished {
		return v
	}
	data, err := root.ReadFileMax(hostfs.StatusFile, MaxStatusSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Verdict{Unknown, "no status: verify has not finished since boot; see journalctl -u " + unitsOf(root)}
	}
	if err != nil {
		return Verdict{Unknown, "cannot tell: " + err.Error()}
	}
	// The schema first: a status another version wrote may use the same
	// keys for other things, and is judged by nobody rather than misread.
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Verdict{Unknown, fmt.Sprintf("cannot tell: %s is not verify's JSON (%v); run rke2-proxy-backend verify", root.Path(hostfs.StatusFile), err)}
	}
	switch {
	case head.Schema == nil:
		return Verdict{Unknown, fmt.Sprintf("cannot tell: %s has no schema (an older rke2-proxy-backend wrote it); run rke2-proxy-backend verify", root.Path(hostfs.StatusFile))}
	case *head.Schema != StatusSchema:
		return Verdict{Unknown, fmt.Sprintf("cannot tell: %s has schema %d, this check reads schema %d (a half-done package upgrade?); run rke2-proxy-backend verify",
			root.Path(hostfs.StatusFile), *head.Schema, StatusSchema)}
	}
	var r verify.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return Verdict{Unknown, fmt.Sprintf("cannot tell: %s is not verify's JSON (%v); run rke2-proxy-backend verify", root.Path(hostfs.StatusFile), err)}
	}
	if r.Verdict == VerdictInvalid {
		return noResult(r.Invalid)
	}
	return resultVerdict(p.AppliedBackend(), &r)
}

// planVerdict judges the plan alone: judged is false when it applied a
// backend, whose run's result is then to be judged. Only the backend RKE2
// was given is judged (plan.Applied): a plan apply could not carry out
// says nothing about what kube-proxy runs.
func planVerdict(root hostfs.Root, p plan.Plan, planErr error) (v Verdict, judged bool) {
	applied := p.AppliedBackend()
	switch {
	case planErr == nil && applied == "" && p.Decision.Disabled:
		return Verdict{OK, "rke2-proxy-backend is turned off (backend: off); nothing to check"}, true
	case errors.Is(planErr, fs.ErrNotExist):
		return Verdict{Unknown, "no plan: apply has not run since boot (is " + unitsOf(root) + " started?)"}, true
	case planErr != nil:
		return Verdict{Unknown, "cannot tell: " + planErr.Error()}, true
	case applied == "":
		return Verdict{Unknown, "not applied: apply gave " + distro.Find(root, "").Kind.Name() + " no backend this boot: " + p.Applied.Nothing}, true
	}
	return Verdict{}, false
}

// noResult is the verdict on a run that left no result, and why.
func noResult(why string) Verdict {
	return Verdict{Unknown, "cannot tell: the last verify run left no result: " + why}
}

// unitsOf names the units whose start runs apply, as check's words say
// them: RKE2's two, or on k3s the ones installed (k3s, k3s-agent,
// k3s-NAME), found as the generator finds them (distro.Find). The verdicts
// that name them are the ones NPD shows while nothing was applied, when an
// operator reads which unit to start or look at.
func unitsOf(root hostfs.Root) string {
	d := distro.Find(root, "")
	units := d.UnitNames()
	if fixed := d.Kind.Profile().Units; fixed != nil {
		units = fixed
	}
	if len(units) == 0 {
		return d.Kind.Name()
	}
	var names []string
	for _, n := range units {
		names = append(names, strings.TrimSuffix(n, ".service"))
	}
	return strings.Join(names, "/")
}

// readOnly refuses a status directory on a read-only filesystem: no
// verify run can mark, store or invalidate anything there, so status.json
// may be any earlier run's. A read-only view of a writable one (a pod's
// hostPath mount) is no sign of that: the host's verify writes there.
func readOnly(root hostfs.Root) (Verdict, bool) {
	ro, err := root.ReadOnlyFS(hostfs.RunDir)
	if err != nil || !ro {
		return Verdict{}, false
	}
	return Verdict{Unknown, fmt.Sprintf("cannot tell: %s is on a read-only filesystem: no verify run can store its result (status.json may be an older one)", root.Path(hostfs.RunDir))}, true
}

// unfinishedRun judges verify's run mark (BeginRun): a mark no
// live process holds is a run that ended without storing its result
// (killed, or it could write nothing), so status.json is an earlier
// run's and says nothing of this node now. A mark still held is a run
// under way: status.json is then the last finished run's, as always.
func unfinishedRun(root hostfs.Root) (Verdict, bool) {
	since, running, err := root.PendingSince(hostfs.VerifyPending)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && running:
		return Verdict{}, false
	case err != nil:
		return Verdict{Unknown, "cannot tell: " + err.Error()}, true
	}
	return Verdict{Unknown, fmt.Sprintf("cannot tell: a verify run started at %s ended without storing its result (killed, or %s could not be written); run rke2-proxy-backend verify",
		since.UTC().Format(time.RFC3339), root.Path(hostfs.StatusFile))}, true
}

// staleWatch judges the watch heartbeat's age. A heartbeat that cannot be
// stat'ed for another reason than absence cannot vouch for the status.
func staleWatch(root hostfs.Root, opts CheckOptions) (Verdict, bool) {
	if opts.MaxAge <= 0 {
		return Verdict{}, false
	}
	beat, err := LastBeat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Verdict{}, false
	case err != nil:
		return Verdict{Unknown, "cannot tell: " + err.Error()}, true
	}
	age := opts.Now.Sub(beat)
	if -age > MaxClockSkew {
		return Verdict{Unknown, fmt.Sprintf("cannot tell: watch's last heartbeat is dated %s in the future (the clock stepped back?); a running %s rewrites it within %s",
			(-age).Round(time.Second), watchUnit, hostfs.WatchHeartbeatEvery)}, true
	}
	if age <= opts.MaxAge {
		return Verdict{}, false
	}
	return Verdict{Unknown, fmt.Sprintf("stale status: watch's last heartbeat is %s old (over --max-age %s); is %s running? systemctl status %s",
		age.Round(time.Second), opts.MaxAge, watchUnit, watchUnit)}, true
}

const watchUnit = "rke2-proxy-backend-watch"

// LastBeat is when the watch service last beat: the heartbeat's own
// mtime (lstat, never a link's target's: that is someone else's, a log
// file's). A missing heartbeat is fs.ErrNotExist; one that is no regular
// file cannot vouch for anything and is an error saying so. check's age
// limit and verify's "a watch runs" both ask it, so they never disagree.
func LastBeat(root hostfs.Root) (time.Time, error) {
	p, err := root.ResolveEntry(hostfs.WatchHeartbeat)
	var fi fs.FileInfo
	if err == nil {
		fi, err = os.Lstat(p)
	}
	switch {
	case err != nil:
		return time.Time{}, err
	case !fi.Mode().IsRegular():
		return time.Time{}, fmt.Errorf("heartbeat %s is not a regular file (%s); is %s running? systemctl status %s",
			root.Path(hostfs.WatchHeartbeat), fi.Mode().Type(), watchUnit, watchUnit)
	}
	return fi.ModTime(), nil
}

// resultVerdict maps one result for the backend the plan applied: any
// real finding is a problem; read errors alone mean verify could not
// look, which is Unknown, not a problem; a result for another backend is
// stale (RKE2 restarted onto a new choice and verify has not finished).
func resultVerdict(applied backend.Backend, r *verify.Result) Verdict {
	if r.Expect != applied {
		return Verdict{Unknown, fmt.Sprintf("stale status: verified %s but the plan applied %s", r.Expect, applied)}
	}
	var problems []verify.Finding
	unreadable := 0
	for _, f := range r.Findings {
		switch f.Kind {
		case verify.KindNoPlan:
			return Verdict{Unknown, "cannot tell: " + f.Message}
		case verify.KindReadError:
			unreadable++
			continue
		}
		problems = append(problems, f)
	}
	switch {
	case len(problems) > 0:
		first := problems[0]
		msg := fmt.Sprintf("%d finding(s)%s, first [%s] %s: %s", len(problems), changedBy(r), first.Kind, first.Backend, first.Message)
		return Verdict{Problem, msg}
	case unreadable > 0:
		return Verdict{Unknown, fmt.Sprintf("cannot tell: %d backend(s) unreadable: %s", unreadable, r.Findings[0].Message)}
	case !r.OK:
		return Verdict{Unknown, "cannot tell: verify failed without a finding; run rke2-proxy-backend verify"}
	}
	return Verdict{OK, fmt.Sprintf("kube-proxy's rules complete in %s, none stranded", r.Expect)}
}

// changedBy names, briefly, the writer watch stored with a failing
// result: the message is cut at MaxMessage, so the pid and comm only.
func changedBy(r *verify.Result) string {
	switch {
	case r.Writer != nil:
		return fmt.Sprintf(" after a change by %d (%s)", r.Writer.PID, r.Writer.Comm)
	case r.WriterUnknown != "":
		return " (writer unknown)"
	}
	return ""
}

// tidy keeps v's message to its first line and at most MaxMessage bytes,
// cut on a rune boundary: NPD takes the whole trimmed stdout as the
// condition message, and the Node condition says the same.
func tidy(v Verdict) Verdict {
	v.Message = oneLine(v.Message)
	return v
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
