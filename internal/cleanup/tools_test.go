package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

// On a host without the backend's tools, cleanup says which binary, that
// cleanup needed it, and which package has it: iptables for the iptables
// backends, nftables only for nftables.
func TestMissingToolsNameTheirPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Read(context.Background(), Exec, backend.IptablesLegacy)
	want := "read iptables-legacy ipv4 rules: cleanup needs iptables-legacy-save, which is not installed (not found in PATH): install the Debian/Ubuntu package iptables (EL: iptables-legacy, from EPEL on EL 9)"
	check.MissingTool(t, "Read legacy", err, want)
	for b, want := range map[backend.Backend]string{
		backend.IptablesNFT: "cleanup needs iptables-nft-restore, which is not installed (not found in PATH): install the Debian/Ubuntu package iptables (EL: iptables-nft; EL 8: iptables)",
		backend.NFTables:    "cleanup needs nft, which is not installed (not found in PATH): install the Debian/Ubuntu package nftables (EL: nftables)",
	} {
		err := Apply(context.Background(), Exec, &Plan{Backend: b, Scripts: map[rules.Family]string{rules.IPv4: "# nothing\n"}})
		if !hostfs.IsMissingTool(err) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Apply %s = %v\nwant ...%s", b, err, want)
		}
	}
}
