package cli

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

func TestWatchUsageErrors(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"--poll", "0s"},
		{"--quiet", "-1s"},
		{"--grace", "-5s"},
		{"--full", "0s"},
		{"--expect", "ipchains"},
		{"--proxy-mode-url", "http://example.com:10249/proxyMode"},
	} {
		code, _, stderr := runIn(t, root, "watch", args...)
		if code != 2 {
			t.Errorf("watch %v: exit %d, want 2 (usage); stderr:\n%s", args, code, stderr)
		}
	}
}

// With backend: off in the plan there is nothing to watch: the service
// ends cleanly instead of reporting "cannot tell" forever.
func TestWatchBackendOff(t *testing.T) {
	root := t.TempDir()
	var p plan.Plan
	p.Decision.Disabled = true
	if _, err := plan.Write(hostfs.New(root), p); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runIn(t, root, "watch")
	if code != 0 || !strings.Contains(stdout, "turned off") {
		t.Errorf("watch with backend: off: exit %d, stdout %q, stderr %q; want 0 and a note", code, stdout, stderr)
	}
}
