package kmod

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
)

// loadWithin installs script as modprobe on a tree where nft_chain_nat is
// available, loads it with timeout and fails the test when Load takes
// longer than limit.
func loadWithin(t *testing.T, script string, timeout, limit time.Duration) Result {
	t.Helper()
	root := fakeTree(t, nil, nil, []string{"nft_chain_nat"})
	kmodtest.InstallScript(t, root.Dir(), script)
	state, err := ReadState(root, release)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := Loader{Root: root, Timeout: timeout}.Load(context.Background(), state, []string{"nft_chain_nat"})
	if took := time.Since(start); took > limit {
		t.Fatalf("Load took %s, more than %s", took, limit)
	}
	return r
}

// A modprobe that hangs with a child holding its stderr is ended at the
// limit: before, exec.CommandContext killed modprobe and then waited for
// the child to close stderr, i.e. for as long as the child lived.
func TestLoadEndsAHangingModprobeAndItsChildren(t *testing.T) {
	r := loadWithin(t, kmodtest.HangingWithChild, 300*time.Millisecond, 300*time.Millisecond+pipeGrace+5*time.Second)
	if len(r.Missing) != 1 || !strings.Contains(r.Missing[0].Error, "did not finish within 300ms and was killed") {
		t.Errorf("missing %+v; want nft_chain_nat killed at the limit", r.Missing)
	}
}

// A modprobe that succeeded is not held up by a child it left behind.
func TestLoadDoesNotWaitForALeftoverChild(t *testing.T) {
	r := loadWithin(t, kmodtest.ExitsLeavingStderrHolder, 30*time.Second, pipeGrace+5*time.Second)
	if len(r.Loaded) != 1 || len(r.Missing) != 0 {
		t.Errorf("loaded %v missing %+v; want nft_chain_nat loaded", r.Loaded, r.Missing)
	}
}
