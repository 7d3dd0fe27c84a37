package proof

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Readiness138 is whether this node keeps its backend when kube-proxy
// reaches Kubernetes 1.38, which picks iptables-legacy or iptables-nft
// itself by where kubelet's KUBE-IPTABLES-HINT / KUBE-KUBELET-CANARY
// chains are (decide.DetectMode, modelled: docs/kubernetes-1.38.md), not
// by IPTABLES_MODE. It rests on the chains this run read live: kubelet
// has written them already, with the iptables it runs with.
type Readiness138 struct {
	// Applied is the backend the plan applied (verify's expectation).
	Applied backend.Backend
	// Affected is false in nftables mode: kube-proxy runs no iptables
	// there, so the flavour choice does not touch it. The iptables and
	// ipvs proxiers both take their client from DetectHostMode.
	Affected bool
	// Known is false when the run could not read a flavour the answer
	// depends on (why in Unknown).
	Known   bool
	Unknown string
	// WouldPick is what 1.38's kube-proxy would pick; Moves says it is not
	// Applied.
	WouldPick backend.Backend
	Moves     bool
	// IptablesMode says whether the IPTABLES_MODE apply writes into
	// kube-proxy's environment picks the flavour of the kube-proxy the
	// node runs now (the plan's Kubernetes version): one of the
	// IptablesMode* values.
	IptablesMode string
}

// Whether IPTABLES_MODE decides kube-proxy's iptables flavour now.
const (
	// IptablesModeDecides: before 1.38 kube-proxy runs the image's
	// iptables wrapper (k3s-root's iptables-detect.sh), which honours it.
	IptablesModeDecides = "yes"
	// IptablesModeIgnored: 1.38+ calls DetectHostMode, which picks by
	// kubelet's chains (modelled, the v1.0.0 it uses unread: if it still
	// ran the image's iptables, the variable would still decide).
	IptablesModeIgnored = "no"
	// IptablesModeUnknown: the plan names no Kubernetes version.
	IptablesModeUnknown = "unknown"
	// IptablesModeNotAffected: nftables mode runs no iptables.
	IptablesModeNotAffected = "not-affected"
)

// iptablesModeOf is whether IPTABLES_MODE decides for r's backend and
// Kubernetes version.
func iptablesModeOf(r *verify.Result) string {
	if !r.Expect.UsesIptables() {
		return IptablesModeNotAffected
	}
	v, err := rke2.ParseVersion(r.Kubernetes)
	switch {
	case err != nil:
		return IptablesModeUnknown
	case v.AtLeast(1, 38):
		return IptablesModeIgnored
	}
	return IptablesModeDecides
}

// Readiness138Of reads r's live kubelet chains. A nil result, or one
// without an expected backend, is unknown.
func Readiness138Of(r *verify.Result) Readiness138 {
	if r == nil || r.Expect == "" {
		return Readiness138{Unknown: "no verify result with an applied backend", IptablesMode: IptablesModeUnknown}
	}
	k := Readiness138{Applied: r.Expect, Affected: r.Expect.UsesIptables(), IptablesMode: iptablesModeOf(r)}
	if !k.Affected {
		k.Known = true
		return k
	}
	var h decide.HintChains
	read := map[backend.Backend]bool{}
	for _, st := range r.Backends {
		if st.ReadError != "" || (st.Backend != backend.IptablesNFT && st.Backend != backend.IptablesLegacy) {
			continue
		}
		read[st.Backend] = true
		if len(st.KubeletHints) > 0 {
			h.NFT = h.NFT || st.Backend == backend.IptablesNFT
			h.Legacy = h.Legacy || st.Backend == backend.IptablesLegacy
		}
	}
	// nft is looked at first: its hint decides alone; without one, legacy
	// must have been read too.
	switch {
	case !read[backend.IptablesNFT]:
		k.Unknown = "iptables-nft's rules could not be read"
		return k
	case !h.NFT && !read[backend.IptablesLegacy]:
		k.Unknown = "iptables-legacy's rules could not be read"
		return k
	}
	k.Known, k.WouldPick = true, decide.DetectMode(h)
	k.Moves = k.WouldPick != k.Applied
	return k
}

// Value is k as the Node annotation says it:
// "would-pick=iptables-legacy; applied=iptables-nft; moves".
func (k Readiness138) Value() string {
	switch {
	case !k.Known:
		return "unknown; " + k.Unknown
	case !k.Affected:
		return fmt.Sprintf("not-affected; applied=%s", k.Applied)
	}
	word := "stays"
	if k.Moves {
		word = "moves"
	}
	return fmt.Sprintf("would-pick=%s; applied=%s; %s", k.WouldPick, k.Applied, word)
}

// k138Metric writes k's series; none while it is unknown, so that a 0 is
// never read as "stays" when the run could not tell.
func k138Metric(b *strings.Builder, k Readiness138) {
	gauge(b, "rke2_proxy_backend_k8s138_would_move", "1 when kube-proxy 1.38, which picks its iptables flavour by kubelet's hint chains (modelled), would pick another backend than the applied one; would_pick is not-affected in nftables mode, and no series while unknown.")
	if !k.Known {
		return
	}
	pick := string(k.WouldPick)
	if !k.Affected {
		pick = "not-affected"
	}
	fmt.Fprintf(b, "rke2_proxy_backend_k8s138_would_move{would_pick=%q,applied=%q} %d\n", pick, k.Applied, one(k.Moves))
}
