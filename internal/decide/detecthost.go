package decide

import (
	"fmt"
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// From Kubernetes 1.38 kube-proxy no longer takes its iptables flavour
// from the image's wrapper script (and so from IPTABLES_MODE): it calls
// iptables-wrappers' DetectHostMode, and kubelet writes its hint chains
// with UseInstalledMode (docs/kubernetes-1.38.md). The v1.0.0 source of
// those functions could not be read; this models the closest code found,
// iptables-wrappers' DetectMode, which looks for KUBE-IPTABLES-HINT or
// KUBE-KUBELET-CANARY in nft mangle (IPv4, then IPv6), then in legacy
// (IPv4, then IPv6), and falls back to nft. The IPTABLES_MODE the drop-in
// writes stays: if DetectHostMode only picks a flavour and still runs the
// image's iptables wrapper, the variable decides, and both readings must
// end on the same backend, which is what the warning below checks.

// HintChains says in which iptables flavour kubelet's hint or canary
// chains exist (either address family).
type HintChains struct {
	NFT, Legacy bool
}

// DetectMode is the model of iptables-wrappers' DetectMode: nft when nft
// holds kubelet's chains, else legacy when legacy does, else nft. The
// address family does not change the answer, since every nft probe comes
// before every legacy one.
func DetectMode(h HintChains) backend.Backend {
	if h.Legacy && !h.NFT {
		return backend.IptablesLegacy
	}
	return backend.IptablesNFT
}

// Prediction is the flavour kube-proxy 1.38+ is expected to use, and the
// facts it rests on, as a clause ("kubelet's chains are in ...").
type Prediction struct {
	Flavour backend.Backend
	Why     string
	// Known is false when the facts cannot tell: the host's iptables
	// alternative is unknown and what kubelet adds could change the answer.
	Known bool
}

// PredictFlavour says which flavour kube-proxy 1.38+ will find kubelet's
// chains in once kubelet has started: the chains live now (live, when
// probed; at boot there are none) plus those kubelet writes with the
// host's installed iptables (alternative: "legacy", "nft" or unknown).
// kubelet starts kube-proxy's static pod, so its chains are written first.
//
// Live rules count a hint chain in any iptables table while DetectMode
// reads nft's mangle table only; kubelet writes its canary in mangle too,
// so the two differ only if someone removed mangle's copy by hand.
func PredictFlavour(live facts.LiveRules, alternative string) Prediction {
	now := HintChains{}
	if live.Probed {
		now.NFT = slices.Contains(live.KubeletHint, string(backend.IptablesNFT))
		now.Legacy = slices.Contains(live.KubeletHint, string(backend.IptablesLegacy))
	}
	after := func(alt string) HintChains {
		h := now
		h.NFT = h.NFT || alt == "nft"
		h.Legacy = h.Legacy || alt == "legacy"
		return h
	}
	p := Prediction{Flavour: DetectMode(after(alternative)), Known: true}
	if alternative != "legacy" && alternative != "nft" {
		p.Known = DetectMode(after("legacy")) == DetectMode(after("nft"))
	}
	switch {
	case alternative == "legacy" || alternative == "nft":
		p.Why = fmt.Sprintf("the host's iptables command is %s, with which kubelet writes its chains", byIptablesMode(alternative))
		if now.NFT && alternative == "legacy" {
			p.Why += ", and kubelet's chains are already in iptables-nft (a stale copy from before the alternative was moved), which is looked at first"
		}
	case now.NFT:
		p.Why = "kubelet's chains are in iptables-nft, which is looked at first"
	case now.Legacy:
		p.Why = "kubelet's chains are in iptables-legacy only"
	default:
		p.Why = "no kubelet chains are known and the host's iptables alternative is unknown"
	}
	return p
}

// detectHostWarning warns when kube-proxy 1.38+ is expected to run on
// another iptables flavour than b: IPTABLES_MODE alone no longer holds it.
func (s *state) detectHostWarning(b backend.Backend) {
	v := s.f.RKE2.Kubernetes
	if !v.AtLeast(1, 38) || (b != backend.IptablesLegacy && b != backend.IptablesNFT) {
		return
	}
	p := PredictFlavour(s.f.LiveRules, s.f.Userspace.IptablesAlternative)
	if !p.Known || p.Flavour == b {
		return
	}
	fix := vocab.KubeletHintsFix(b.IptablesMode())
	s.say("Warning: kube-proxy %s chooses iptables-legacy or iptables-nft itself, by where kubelet's KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains are, not by IPTABLES_MODE (as modelled on iptables-wrappers' DetectMode: nft first, then legacy, nft when neither has them; the v1.0.0 it uses could not be read): %s, so it will pick %s while this decision is %s. Fix: %s.",
		v, p.Why, p.Flavour, b, fix)
}
