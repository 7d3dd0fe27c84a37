package check

import (
	"strings"
	"testing"
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
	Says(r, "log", "one two three", "four", "two", "five")
	Table(r, "upper", strings.ToUpper, map[string]string{"a": "a", "b": "B"})
	if len(r.errs) != 3 {
		t.Fatalf("%d failures, want 3 (two phrases, one output): %q", len(r.errs), r.errs)
	}
}
