package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// A misspelt condition must fail the script, not skip it: before, [!netn]
// read as "not netn", which is always true, and skipped the script on
// every machine, CI included.
func TestUnknownConditionFailsTheScript(t *testing.T) {
	dir := t.TempDir()
	script := "[!netn] skip 'the typo must not skip'\nexec true\n"
	if err := os.WriteFile(filepath.Join(dir, "typo.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recordingT{}
	rec.Run("scripts", func(st testscript.T) { testscript.RunT(st, params(dir)) })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.skipped {
		t.Fatalf("a script with a misspelt condition was skipped; log:\n%s", rec.log.String())
	}
	if !rec.failed || !strings.Contains(rec.log.String(), `unknown condition "netn"`) {
		t.Fatalf("failed = %v, want a failure naming the unknown condition; log:\n%s", rec.failed, rec.log.String())
	}
	// The real names still answer without an error.
	for _, c := range []string{"root", "netns", "bash-completion"} {
		if _, err := condition(c); err != nil {
			t.Errorf("condition(%q): %v", c, err)
		}
	}
}

// recordingT is a testscript.T that records a failure or skip instead of
// reporting it, so a test can assert that a script fails. Each Run runs
// in its own goroutine, as testing does, so FailNow and Skip can end it.
type recordingT struct {
	mu      sync.Mutex
	log     strings.Builder
	failed  bool
	skipped bool
}

func (r *recordingT) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(&r.log, args...)
}

func (r *recordingT) Fatal(args ...any) { r.Log(args...); r.FailNow() }

func (r *recordingT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingT) Skip(args ...any) {
	r.Log(args...)
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingT) Parallel() {}

func (r *recordingT) Verbose() bool { return false }

func (r *recordingT) Run(_ string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}
