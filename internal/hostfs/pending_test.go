package hostfs

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// The mark says "a run is on" while a run holds it, "a run ended without
// its result" once nobody does, and nothing once the last run is done.
func TestPending(t *testing.T) {
	r := New(t.TempDir())
	const mark = "/run/x/verify.pending"
	state := func() string {
		t.Helper()
		_, running, err := r.PendingSince(mark)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "none"
		case err != nil:
			t.Fatal(err)
		case running:
			return "running"
		}
		return "left"
	}
	a, err := r.BeginPending(mark)
	if err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "running" {
		t.Fatalf("one run on: %s", s)
	}
	b, err := r.BeginPending(mark)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Done(nil); err != nil || state() != "running" {
		t.Fatalf("the first of two runs done: %v, %s; want the mark kept for the other", err, state())
	}
	cleaned := 0
	if err := b.Done(func() error { cleaned++; return nil }); err != nil || state() != "none" || cleaned != 1 {
		t.Fatalf("both done: %v, %s, cleaned %d times", err, state(), cleaned)
	}
	c, err := r.BeginPending(mark)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if s := state(); s != "left" {
		t.Fatalf("a run that ended without its result: %s", s)
	}
	// The next run takes the mark over and clears it when done.
	d, err := r.BeginPending(mark)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Done(nil); err != nil || state() != "none" {
		t.Fatalf("the next run done: %v, %s", err, state())
	}
	// A reader with a read-only view (NPD's pod) tests the lock too.
	e, err := r.BeginPending(mark)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := os.Chmod(r.Path(mark), 0o444); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "running" {
		t.Errorf("read-only marker: %s", s)
	}
}

// A link planted at the mark's path is never followed.
func TestPendingRefusesALink(t *testing.T) {
	r := New(t.TempDir())
	mustWrite(t, r.Path("/target"), "")
	os.MkdirAll(r.Path("/run/x"), 0o755)
	if err := os.Symlink("/target", r.Path("/run/x/verify.pending")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.BeginPending("/run/x/verify.pending"); err == nil {
		t.Error("began a mark through a link")
	}
	if _, _, err := r.PendingSince("/run/x/verify.pending"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read a mark through a link: %v", err)
	}
}

// A reader beside runs that begin and finish without pause never finds the
// mark left unlocked: neither a new mark before its lock nor a finished
// one it opened just before the run unlinked it. Both races made check
// say "a verify run ended without storing its result" beside a watch that
// had stored every one (the nas-absent VM boot).
func TestPendingReaderNeverSeesALiveRunAsLeft(t *testing.T) {
	r := New(t.TempDir())
	const mark = "/run/x/verify.pending"
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			p, err := r.BeginPending(mark)
			if err == nil {
				err = p.Done(nil)
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	left := 0
	for i := 0; i < 20000; i++ {
		if _, running, err := r.PendingSince(mark); err == nil && !running {
			left++
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if left > 0 {
		t.Errorf("%d of 20000 reads took a live run's mark for one left by a killed run", left)
	}
	if entries, _ := os.ReadDir(r.Path("/run/x")); len(entries) > 1 {
		t.Errorf("the runs left files behind: %v", entries)
	}
}
