package decide

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

// The nft in RKE2's kube-proxy image against the host's nft (skew.Judge).
// A known-bad pair keeps auto from choosing nftables and stops a switch to
// it; it does not make nftables "unsupported" for the host, because a node
// already running nftables (this boot's plan, live rules) must not flip
// backends on a daemon-reload: it gets the warning instead, as does an
// operator's explicit choice.

// skewTable is the image and pair table; tests put in rows the shipped
// table does not have yet (a release that is both documented for nftables
// and paired badly).
var skewTable = skew.Default

// nftSkew judges f; the report's Why is "" when nothing is wrong.
func nftSkew(f facts.Facts) (skew.Report, skew.Host) {
	h := facts.SkewHost(f)
	return skew.Judge(skewTable(), h), h
}

// skewBlocksChoice says why auto must not pick nftables ("" when it may):
// only a known-bad pair, not one that cannot be told (unknown host nft).
func skewBlocksChoice(f facts.Facts) string {
	r, h := nftSkew(f)
	if len(r.Bad) == 0 {
		return ""
	}
	return r.Why(h)
}

// skewWarning is the reason a decision for nftables gets when the pair is
// bad or cannot be told apart from a bad one.
func (s *state) skewWarning(b backend.Backend) {
	if b != backend.NFTables {
		return
	}
	r, h := nftSkew(s.f)
	if !r.Problem() {
		return
	}
	s.say("Warning: %s; kube-proxy's nftables syncs are likely to fail. Fix: %s.", r.Why(h), r.Fix())
}

// skewRefusal says why a switch to nftables must not start ("" when it may).
func skewRefusal(f facts.Facts) string {
	r, h := nftSkew(f)
	if len(r.Bad) == 0 {
		return ""
	}
	return r.Why(h) + "; " + r.Fix() + ", then switch again"
}
