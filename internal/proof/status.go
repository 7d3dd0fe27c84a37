package proof

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// StatusSchema versions status.json (and verify -o json): raise it when a
// key is removed, renamed or changes type. Readers refuse a schema they do
// not know rather than misread it.
const StatusSchema = 1

// MaxStatusSize bounds status.json: check reads no more, so verify never
// writes more (a larger result is written as an invalid record instead).
// A real one is a few KiB (one entry per backend and per finding, bounded
// figures). The cap also keeps a corrupt or hostile file from costing
// node-problem-detector's pod memory at every check.
const MaxStatusSize = 1 << 20

// VerdictInvalid is the verdict of the record a verify run leaves when it
// could not write its result: whatever status.json said before is no
// longer true of this node, and check must say it cannot tell.
const VerdictInvalid = "invalid"

// JSON is the result as printed with -o json and stored in hostfs.StatusFile.
func JSON(r *verify.Result) ([]byte, error) {
	r.Schema = StatusSchema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode verify result: %w", err)
	}
	return append(b, '\n'), nil
}

// Write prints res as the verify command does: the text report, or the
// JSON document status.json holds.
func Write(w io.Writer, res *verify.Result, asJSON bool) error {
	if !asJSON {
		if err := verify.WriteText(w, res); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	}
	b, err := JSON(res)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// WriteStatus stores r atomically at hostfs.StatusFile under root. A run
// that cannot store its result never leaves the previous one in place:
// it writes an invalid record (Invalidate) instead and returns the error.
func WriteStatus(root hostfs.Root, r *verify.Result) error {
	b, err := JSON(r)
	if err == nil && len(b) > MaxStatusSize {
		err = fmt.Errorf("verify result is %d bytes, over the %d check reads", len(b), MaxStatusSize)
	}
	if err == nil {
		if _, err = root.WriteFileAtomic(hostfs.StatusFile, b, 0o644); err == nil {
			return nil
		}
		err = fmt.Errorf("write status %s: %w", root.Path(hostfs.StatusFile), err)
	}
	if ierr := Invalidate(root, err.Error()); ierr != nil {
		return errors.Join(err, ierr)
	}
	return fmt.Errorf("%w (status.json now says the result is invalid)", err)
}

// invalidRecord is status.json after a run that could not write its result.
type invalidRecord struct {
	Schema  int    `json:"schema"`
	OK      bool   `json:"ok"`
	Verdict string `json:"verdict"`
	Invalid string `json:"invalid"`
}

// ErrStatusStands is in the error of a run that could neither store its
// result nor invalidate the previous one: status.json still shows an
// older run's. The run's mark (BeginRun) is then left for check to find.
var ErrStatusStands = errors.New("status.json still shows an earlier run's result")

// Invalidate replaces status.json with a record saying why the last run's
// result is missing. When even that cannot be written (a full disk), the
// old status is removed: no status is "cannot tell" too, never the old OK.
// When neither works, the error wraps ErrStatusStands.
func Invalidate(root hostfs.Root, why string) error {
	b, _ := json.Marshal(invalidRecord{Schema: StatusSchema, Verdict: VerdictInvalid, Invalid: clip(why, 512)})
	_, werr := root.WriteFileAtomic(hostfs.StatusFile, append(b, '\n'), 0o644)
	if werr == nil {
		return nil
	}
	p, err := root.ResolveEntry(hostfs.StatusFile)
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("cannot invalidate %s: writing failed (%v) and removing failed (%w): %w", root.Path(hostfs.StatusFile), werr, err, ErrStatusStands)
	}
	return nil
}

// StoreRun is one verify run's mark on hostfs.VerifyPending, from before it
// judges until its result (or its invalid record) is stored: a run killed
// on the way, or one that could change nothing, leaves the mark without
// its lock, and check says it cannot tell instead of trusting status.json.
type StoreRun struct {
	p     *hostfs.Pending
	root  hostfs.Root
	files []string // the files the run writes, and its mark, whose stale temps go
}

// BeginRun marks a run in progress that writes status.json and files
// (the metrics, the node-feature file). A mark that cannot be made (the
// directory is read-only or out of inodes) is returned as an error for
// the caller to warn about; the run goes on and stores its result as
// usual, and the StoreRun is still valid (it marks nothing).
func BeginRun(root hostfs.Root, files ...string) (*StoreRun, error) {
	p, err := root.BeginPending(hostfs.VerifyPending)
	return &StoreRun{p: p, root: root, files: append([]string{hostfs.StatusFile, hostfs.VerifyPending}, files...)}, err
}

// End closes the run given what storing its result returned: the mark goes
// unless the store left an earlier result standing (ErrStatusStands). The
// last run to end removes the temp files killed runs left beside the files
// verify writes (no other run is under way then to own one).
func (r *StoreRun) End(storeErr error) error {
	if r == nil || r.p == nil {
		return nil
	}
	p := r.p
	r.p = nil
	if errors.Is(storeErr, ErrStatusStands) {
		p.Close()
		return nil
	}
	return p.Done(func() error {
		var errs []error
		for _, f := range r.files {
			_, err := r.root.RemoveStaleTemps(f)
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// clip shortens s to n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
