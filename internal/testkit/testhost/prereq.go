package testhost

import (
	"fmt"
	"os"
	"testing"
)

// Unmet ends a test whose prerequisite is missing here (not root, a tool
// not installed): a skip on a developer's machine, a failure when CI=true
// (set by CI, which runs as root with every tool installed), so CI cannot
// pass green by skipping. It is the Go side of packaging/test/lib/common.sh's
// skip.
func Unmet(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, and CI must meet every prerequisite rather than skip", why)
	}
	t.Skip(why)
}
