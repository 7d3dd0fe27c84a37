package netfilter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// TestIptablesNFTShallowSkipsChains: verify's read of iptables-nft (Shallow
// with SkipChain) counts the rules of kube-proxy's per-service chains
// without decoding them and gives every other rule the Jump and Comment
// the full read gives it (which assertSameAsSave holds to
// iptables-nft-save), on rendered kube-proxy rules of both families and
// on a fixture with quotes and backslashes in its comments.
func TestIptablesNFTShallowSkipsChains(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.Setup(t, "", "iptables-nft-restore", "ip6tables-nft-restore") {
		return
	}
	expectedtest.Load(t, expected.Options{Backend: backend.IptablesNFT, Services: 100})
	compareShallowNFT(t)
	nstest.Sh(t, "nft flush ruleset")
	nstest.Sh(t, "iptables-nft-restore < "+filepath.Join(ref, tracepacketFixture))
	compareShallowNFT(t)
}

func compareShallowNFT(t *testing.T) {
	t.Helper()
	full, _ := readText(t, backend.IptablesNFT)
	assertSameAsSave(t, backend.IptablesNFT, full)
	sys := NewSystem(hostfs.New("/"))
	sys.Shallow, sys.SkipChain = true, vocab.IsPerServiceChain
	got, err := sys.Read(context.Background(), backend.IptablesNFT)
	if err != nil {
		t.Fatal(err)
	}
	if read, comments := compareShallow(t, full, got, vocab.IsPerServiceChain); read == 0 || comments == 0 {
		t.Errorf("%d rules read, %d with a comment: the test needs both", read, comments)
	}
}
