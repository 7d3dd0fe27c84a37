package decide

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// On k3s there is no kube-proxy image: kube-proxy runs inside k3s and its
// nftables mode execs the first `nft` on k3s's PATH (<data>/bin, then the
// host's PATH and <data>/bin/aux, bin/aux first with prefer-bundled-bin;
// k3s-io/k3s cmd/k3s/main.go). k3s-root ships nft in bin/aux from v0.14.1
// on. So the nft that would run, found by the probe, replaces RKE2's
// image table.

// k3sPrefersBundled reports whether prefer-bundled-bin is in effect at
// k3s's next start: the operator's setting when there is one, else what
// apply writes (it sets it where the release knows the key). known is
// false when neither tells (no operator setting, k3s's version unknown:
// the generator's case, since apply asks the binary).
func k3sPrefersBundled(f facts.Facts) (yes, known bool) {
	if op, set := f.RKE2.Config.LastExcept(rke2.KeyPreferBundledBin, ourDropIn(f)); set {
		return op.Value == "true", true
	}
	return rke2.SupportsPreferBundledBin(f.RKE2.Kubernetes), f.RKE2.Kubernetes.Known()
}

// k3sNft is the nft kube-proxy would run on k3s's PATH.
type k3sNft struct {
	path    string // "" when none is found (or cannot be told yet)
	what    string // "k3s's bundled nft", "the host's nft", ...
	version facts.ToolVersion
	// unknown is set when k3s has not extracted its binaries: bin/aux
	// may hold an nft that would run before path.
	unknown bool
	order   string // how k3s's PATH orders the dirs, for reasons
}

// runningK3sNft finds it, in k3s's PATH order.
func runningK3sNft(f facts.Facts) k3sNft {
	n := facts.K3sNft{}
	if f.RKE2.K3sNft != nil {
		n = *f.RKE2.K3sNft
	}
	dataDir := f.RKE2.DataDir
	if dataDir == "" {
		dataDir = distro.K3s.DataDir()
	}
	aux := distro.K3s.AuxDir(dataDir)
	type dir struct{ found, what string }
	bin := dir{n.Bin, "an nft in k3s's own bin"}
	bundled := dir{n.Aux, "k3s's bundled nft (k3s-root's, in bin/aux)"}
	host := dir{n.Host, "the host's nft"}
	out := k3sNft{order: "without prefer-bundled-bin k3s's PATH puts the host's dirs before bin/aux"}
	order := []dir{bin, host, bundled}
	if yes, _ := k3sPrefersBundled(f); yes {
		out.order = "prefer-bundled-bin puts k3s's bin/aux before the host's dirs in k3s's PATH"
		order = []dir{bin, bundled, host}
	}
	for i, d := range order {
		if d.found == "" {
			continue
		}
		out.path, out.what, out.version = d.found, d.what, n.Versions[d.found]
		if d == host && out.version.Version == "" && (d.found == "/usr/sbin/nft" || d.found == "/sbin/nft") {
			out.version = f.Userspace.Nft // where dpkg's nftables package puts it
		}
		out.unknown = !n.Extracted && slices.Index(order, bundled) < i
		return out
	}
	out.unknown = !n.Extracted
	out.what = path.Join(aux, "nft")
	return out
}

// k3sNftCapability judges nftables mode's nft on k3s.
func k3sNftCapability(f facts.Facts) capability {
	n := runningK3sNft(f)
	dirs := strings.Join(facts.K3sUnitPath, ", ")
	switch {
	case n.path == "" && n.unknown:
		return capability{support: unconfirmed, why: fmt.Sprintf("k3s has not extracted its binaries yet, so whether its bin/aux holds the nft kube-proxy's nftables mode runs (k3s-root ships one from v0.14.1 on) cannot be told, and no nft is in the host's PATH (%s)", dirs)}
	case n.path == "":
		return capability{support: unsupported, why: fmt.Sprintf("no nft is on k3s's PATH for kube-proxy's nftables mode to run: none in k3s's bin/aux (%s; k3s-root ships one from v0.14.1 on) nor in the host's PATH (%s); install the host's nftables package or upgrade k3s", n.what, dirs)}
	case n.version.Version != "" && facts.VersionBelow(n.version.Version, nftMinimum...):
		return capability{support: unsupported, why: fmt.Sprintf("the nft kube-proxy would run on k3s's PATH, %s (%s), is %s (per %s), older than 1.0.1, which crashes on kube-proxy's nftables rules (kubernetes#122743)", n.path, n.what, n.version.Version, n.version.Source)}
	}
	return capability{support: supported}
}

// sayK3sNft names the nft nftables mode runs on k3s.
func (s *state) sayK3sNft() {
	n := runningK3sNft(s.f)
	if n.path == "" {
		return // the capability's why already said it
	}
	v := "its version is not read here"
	if n.version.Version != "" {
		v = fmt.Sprintf("nft %s, per %s", n.version.Version, n.version.Source)
	}
	s.say("kube-proxy's nftables mode runs inside k3s and execs nft from k3s's PATH: %s, %s (%s), since %s.", n.path, n.what, v, n.order)
	if n.unknown {
		s.say("k3s has not extracted its binaries yet: if its bin/aux holds an nft (k3s-root v0.14.1 and later), that one runs instead.")
	}
}
