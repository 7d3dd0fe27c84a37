package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

func TestNftSkewFindingsSeverity(t *testing.T) {
	tab := skew.Default()
	h := skew.Host{Release: "v1.34.5+rke2r1", Kubernetes: skew.MustVersion("1.34.5"), Nft: skew.MustVersion("1.1.3"), NftSource: "test", SetsRead: true}
	// Sets read, none foreign: latent, a warning.
	if f, w := NftSkewFindings(backend.NFTables, skew.Judge(tab, h), h); len(f) != 0 || len(w) != 1 {
		t.Errorf("no foreign sets: %d findings, %d warnings", len(f), len(w))
	}
	h.Sets = []skew.UserdataSet{{Family: "inet", Table: "firewalld", Name: "s"}}
	f, w := NftSkewFindings(backend.NFTables, skew.Judge(tab, h), h)
	if len(f) != 1 || len(w) != 0 || !strings.Contains(f[0].Message, "inet firewalld set s") {
		t.Errorf("foreign sets: %+v, %+v", f, w)
	}
	// Unknown host nft with foreign sets: cannot tell, a warning.
	h.Nft, h.NftSource = skew.Version{}, ""
	if f, w := NftSkewFindings(backend.NFTables, skew.Judge(tab, h), h); len(f) != 0 || len(w) != 1 {
		t.Errorf("unknown host nft: %d findings, %d warnings", len(f), len(w))
	}
}
