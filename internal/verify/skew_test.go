package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A fixture node on RKE2 v1.34.5 (kube-proxy before kubernetes#137501,
// image nft 1.1.0) with the host's nft 1.1.3: a node verified on nftables
// fails with the skew finding; one on iptables-nft does not run the
// image's nft and is not judged.
func TestAddNftSkewFixtureHost(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.34.5+rke2r1").
		File(facts.DpkgStatus, "Package: nftables\nStatus: install ok installed\nVersion: 1.1.3-1\n")
	res := &Result{Expect: backend.NFTables, Findings: []Finding{}}
	res.settle()
	AddNftSkew(context.Background(), h.Root(), addOnFacts(h.Root(), distro.RKE2, res.Expect), res)
	if res.Verdict != VerdictFailed || len(res.Findings) != 1 || res.Findings[0].Kind != KindNftSkew {
		t.Fatalf("verdict %s, findings %+v", res.Verdict, res.Findings)
	}
	for _, w := range []string{"RKE2 v1.34.5+rke2r1's kube-proxy image has nft 1.1.0", "the host's nft is 1.1.3 (per /var/lib/dpkg/status (package nftables))", "kubernetes/kubernetes#137501"} {
		if !strings.Contains(res.Findings[0].Message, w) {
			t.Errorf("message %q lacks %q", res.Findings[0].Message, w)
		}
	}
	if !strings.Contains(res.Findings[0].Fix, "iptables backend") {
		t.Errorf("fix %q", res.Findings[0].Fix)
	}
	other := &Result{Expect: backend.IptablesNFT, Findings: []Finding{}}
	other.settle()
	AddNftSkew(context.Background(), h.Root(), addOnFacts(h.Root(), distro.RKE2, other.Expect), other)
	if !other.OK || len(other.Findings)+len(other.Warnings) != 0 {
		t.Errorf("iptables-nft node: %+v", other)
	}
}

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
