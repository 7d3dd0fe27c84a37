package prove

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// A fixture node on RKE2 v1.34.5 (kube-proxy before kubernetes#137501,
// image nft 1.1.0) with the host's nft 1.1.3: a node verified on nftables
// fails with the skew finding; one on iptables-nft does not run the
// image's nft and is not judged.
func TestAddNftSkewFixtureHost(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.34.5+rke2r1").
		File(facts.DpkgStatus, "Package: nftables\nStatus: install ok installed\nVersion: 1.1.3-1\n")
	res := &verify.Result{Expect: backend.NFTables, Findings: []verify.Finding{}}
	res.Add(nil, nil)
	AddNftSkew(context.Background(), h.Root(), addOnFacts(h.Root(), distro.RKE2, res.Expect), res)
	if res.Verdict != verify.VerdictFailed || len(res.Findings) != 1 || res.Findings[0].Kind != verify.KindNftSkew {
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
	other := &verify.Result{Expect: backend.IptablesNFT, Findings: []verify.Finding{}}
	other.Add(nil, nil)
	AddNftSkew(context.Background(), h.Root(), addOnFacts(h.Root(), distro.RKE2, other.Expect), other)
	if !other.OK || len(other.Findings)+len(other.Warnings) != 0 {
		t.Errorf("iptables-nft node: %+v", other)
	}
}
