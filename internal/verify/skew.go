package verify

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

// KindNftSkew is a known-bad pair of the nft in RKE2's kube-proxy image and
// the host's nft (skew.Judge): kube-proxy's nftables syncs crash on sets
// other programs wrote.
const KindNftSkew = "nft-skew"

// NftSkewFindings judges a node expected on expect. Only nftables mode
// runs the image's nft. A known-bad pair fails verify when sets with user
// data exist in tables kube-proxy does not own (or they were not read); with
// none there now, or with the host's nft unknown, it is a warning: nothing
// crashes yet, but the next program to write a set breaks kube-proxy.
func NftSkewFindings(expect backend.Backend, r skew.Report, h skew.Host) (findings, warnings []Finding) {
	if expect != backend.NFTables || !r.Problem() {
		return nil, nil
	}
	f := Finding{Kind: KindNftSkew, Backend: expect, Message: r.Why(h), Fix: r.Fix()}
	if len(r.Bad) > 0 && (len(r.Sets) > 0 || !h.SetsRead) {
		return []Finding{f}, nil
	}
	return nil, []Finding{f}
}
