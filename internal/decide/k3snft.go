package decide

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// On k3s there is no kube-proxy image: kube-proxy runs inside k3s and its
// nftables mode execs the first `nft` on k3s's PATH (<data>/bin, then the
// host's PATH and <data>/bin/aux, bin/aux first with prefer-bundled-bin;
// k3s-io/k3s cmd/k3s/main.go). k3s-root ships nft in bin/aux from v0.14.1
// on. So the nft that would run (facts.RKE2.K3sRunningNft) replaces RKE2's
// image table.

func k3sPrefersBundled(f facts.Facts) (yes, known bool) { return f.RKE2.K3sPrefersBundled() }

func runningK3sNft(f facts.Facts) facts.K3sNftRun { return f.RKE2.K3sRunningNft(f.Userspace.Nft) }

// k3sNftWhat names where a found nft sits on k3s's PATH.
func k3sNftWhat(dir string) string {
	switch dir {
	case facts.K3sNftBin:
		return "an nft in k3s's own bin"
	case facts.K3sNftAux:
		return "k3s's bundled nft (k3s-root's, in bin/aux)"
	case facts.K3sNftHost:
		return "the host's nft"
	}
	return ""
}

// k3sNftCapability judges nftables mode's nft on k3s.
func k3sNftCapability(f facts.Facts) capability {
	n := runningK3sNft(f)
	dirs := strings.Join(facts.K3sUnitPath, ", ")
	switch {
	case n.Path == "" && n.Shadowable:
		return capability{support: unconfirmed, why: fmt.Sprintf("k3s has not extracted its binaries yet, so whether its bin/aux holds the nft kube-proxy's nftables mode runs (k3s-root ships one from v0.14.1 on) cannot be told, and no nft is in the host's PATH (%s)", dirs)}
	case n.Path == "":
		return capability{support: unsupported, why: fmt.Sprintf("no nft is on k3s's PATH for kube-proxy's nftables mode to run: none in k3s's bin/aux (%s; k3s-root ships one from v0.14.1 on) nor in the host's PATH (%s); install the host's nftables package or upgrade k3s", n.AuxPath, dirs)}
	case n.Version.Version != "" && facts.VersionBelow(n.Version.Version, nftMinimum...):
		return capability{support: unsupported, why: fmt.Sprintf("the nft kube-proxy would run on k3s's PATH, %s (%s), is %s (per %s), older than 1.0.1, which crashes on kube-proxy's nftables rules (kubernetes#122743)", n.Path, k3sNftWhat(n.Dir), n.Version.Version, n.Version.Source)}
	}
	return capability{support: supported}
}

// sayK3sNft names the nft nftables mode runs on k3s.
func (s *state) sayK3sNft() {
	n := runningK3sNft(s.f)
	if n.Path == "" {
		return // the capability's why already said it
	}
	v := "its version is not read here"
	if n.Version.Version != "" {
		v = fmt.Sprintf("nft %s, per %s", n.Version.Version, n.Version.Source)
	}
	order := "without prefer-bundled-bin k3s's PATH puts the host's dirs before bin/aux"
	if n.BundledFirst {
		order = "prefer-bundled-bin puts k3s's bin/aux before the host's dirs in k3s's PATH"
	}
	s.say("kube-proxy's nftables mode runs inside k3s and execs nft from k3s's PATH: %s, %s (%s), since %s.", n.Path, k3sNftWhat(n.Dir), v, order)
	if n.Shadowable {
		s.say("k3s has not extracted its binaries yet: if its bin/aux holds an nft (k3s-root v0.14.1 and later), that one runs instead.")
	}
}
