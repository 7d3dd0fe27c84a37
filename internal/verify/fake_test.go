package verify

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// newFake is the Fake with the read options production's reader has
// (NewReader's), so a unit test sees the shapes verify really reads: the
// per-Service chains as counted, undecoded placeholders, not whole rules.
func newFake(t testing.TB, rulesets ...*rules.Ruleset) *netfilter.Fake {
	t.Helper()
	f := netfilter.NewFake(rulesets...)
	f.ReadOptions = NewReader(hostfs.New(t.TempDir())).ReadOptions
	return f
}

// The helper really carries production's options: a Fake built without
// them decodes per-Service chains, which the system reader never does.
func TestNewFakeReadsLikeProduction(t *testing.T) {
	if got := newFake(t).ReadOptions; !got.Shallow || got.SkipChain == nil || !got.SkipChain("KUBE-SVC-X") || got.SkipChain("KUBE-SERVICES") {
		t.Fatalf("newFake's read options = %+v, want NewReader's (shallow, skipping per-Service chains)", got)
	}
}
