package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(format string, a ...any) { r.errs = append(r.errs, format) }

// Each helper fails once per missing phrase or wrong output, and never on
// a text or function that is right: a helper that cannot fail would make
// every test that uses it pass.
func TestHelpersFailWhereTheyShould(t *testing.T) {
	r := &recorder{TB: t}
	Says(r, "log", "one two three", "one", "three")
	Table(r, "upper", strings.ToUpper, map[string]string{"a": "A", "": ""})
	if len(r.errs) != 0 {
		t.Fatalf("failed on right input: %q", r.errs)
	}
	missing := &hostfs.MissingToolError{Tool: "no-such-tool", For: "a test", Err: errors.New("not found")}
	MissingTool(r, "run", missing, missing.Error())
	if len(r.errs) != 0 {
		t.Fatalf("failed on the missing-tool error itself: %q", r.errs)
	}
	Says(r, "log", "one two three", "four", "two", "five")
	Table(r, "upper", strings.ToUpper, map[string]string{"a": "a", "b": "B"})
	MissingTool(r, "run", errors.New(missing.Error()), missing.Error()) // the text alone is not the error
	MissingTool(r, "run", missing, "another text")
	MissingTool(r, "run", nil, "")
	if len(r.errs) != 6 {
		t.Fatalf("%d failures, want 6 (two phrases, one output, three errors): %q", len(r.errs), r.errs)
	}
}

// PromtoolMetrics passes what promtool accepts and fails, once, on a lint
// problem (a counter without _total): else every metrics test using it
// would pass whatever it is given.
func TestPromtoolMetricsFailsWhereItShould(t *testing.T) {
	r := &recorder{TB: t}
	PromtoolMetrics(r, []byte("# HELP foo_total x\n# TYPE foo_total counter\nfoo_total 1\n"))
	if len(r.errs) != 0 {
		t.Fatalf("failed on valid metrics: %q", r.errs)
	}
	PromtoolMetrics(r, []byte("# HELP foo x\n# TYPE foo counter\nfoo 1\n"))
	if len(r.errs) != 1 {
		t.Fatalf("%d failures on a counter without _total, want 1: %q", len(r.errs), r.errs)
	}
}
