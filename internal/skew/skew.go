// Package skew knows which nft reader x writer pairs break kube-proxy's
// nftables mode, and whether this host has one: the nft inside RKE2's
// kube-proxy image (per RKE2 release, from images.tsv) against the host's
// own nft and the sets other programs wrote with it. It is pure: the
// caller reads the host (facts, netfilter/nl) and gets sentences back.
package skew

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// UserdataSet is a set in a table kube-proxy does not own whose netlink
// message carries user data (NFTA_SET_USERDATA): what an older nft trips on.
type UserdataSet struct {
	Family string `json:"family"` // ip, ip6, inet, arp, bridge, netdev
	Table  string `json:"table"`
	Name   string `json:"name"`
	// Kinds are the user data records it holds (key-byteorder, key-typeof,
	// comment, ...), as nl.SetUdataKinds names them.
	Kinds []string `json:"kinds,omitempty"`
}

func (s UserdataSet) String() string { return s.Family + " " + s.Table + " set " + s.Name }

// Host is what the judgement needs from the node.
type Host struct {
	// Release is RKE2's version, e.g. v1.34.2+rke2r1 ("" unknown).
	Release string
	// Kubernetes is the Kubernetes version RKE2 runs (unknown when not known).
	Kubernetes Version
	// Nft is the host's nft and where that was read (unknown when not).
	Nft       Version
	NftSource string
	// Sets are the sets with user data in tables kube-proxy does not own;
	// SetsRead says whether the kernel was asked (the generator does not).
	Sets     []UserdataSet
	SetsRead bool
	// Reader is, where kube-proxy runs no image (k3s: it execs the first
	// nft on k3s's PATH), that nft's version, and ReaderSource names the
	// binary and how its version was read. When known it is the reader,
	// and Release is not looked up.
	Reader       Version
	ReaderSource string
}

// Report is the judgement of one host.
type Report struct {
	// Image is the release's kube-proxy image userspace; ImageKnown is
	// false when the table does not list the release.
	Image      Image
	ImageKnown bool
	// Bad are the pairs the image's nft and the host's nft make.
	Bad []Pair
	// Suspect are the pairs whose reader is the image's nft while the
	// host's nft is unknown and sets with user data exist: they cannot be
	// told apart from a bad pair.
	Suspect []Pair
	// Sets are the foreign sets with user data (when Bad or Suspect).
	Sets []UserdataSet
	// NoImage is set when the reader is Host.Reader (k3s), not an image's.
	NoImage bool
}

// Judge compares the release's image with the host.
func Judge(t *Table, h Host) Report {
	var r Report
	r.Image, r.ImageKnown = t.ImageFor(h.Release)
	if h.Reader.Known() {
		r.Image, r.ImageKnown, r.NoImage = Image{Userland: Userland{Nft: h.Reader}}, true, true
	}
	if !r.ImageKnown || !r.Image.Nft.Known() {
		return r
	}
	for _, p := range t.Pairs {
		if !p.Reader.Contains(r.Image.Nft) || !p.KubeProxy.Contains(h.Kubernetes) {
			continue
		}
		switch {
		case h.Nft.Known() && p.Writer.Contains(h.Nft):
			r.Bad = append(r.Bad, p)
		case !h.Nft.Known() && len(h.Sets) > 0:
			r.Suspect = append(r.Suspect, p)
		}
	}
	if len(r.Bad)+len(r.Suspect) > 0 {
		r.Sets = h.Sets
	}
	return r
}

// Problem reports whether the host has a known-bad pair or cannot be
// told apart from one.
func (r Report) Problem() bool { return len(r.Bad)+len(r.Suspect) > 0 }

// maxNamedSets bounds the sets a sentence names; the JSON has them all.
const maxNamedSets = 5

// Why is the clause that says what is wrong, naming the versions, the
// sources and the sets ("" when nothing is).
func (r Report) Why(h Host) string {
	if !r.Problem() {
		return ""
	}
	img := fmt.Sprintf("RKE2 %s's kube-proxy image has nft %s (k3s-root %s, %s)", r.Image.Release, r.Image.Nft, r.Image.K3sRoot, DataFile)
	if r.NoImage {
		img = fmt.Sprintf("kube-proxy runs nft %s (%s)", h.Reader, h.ReaderSource)
	}
	var b strings.Builder
	if len(r.Bad) > 0 {
		fmt.Fprintf(&b, "%s and the host's nft is %s (per %s), a known-bad pair: ", img, h.Nft, h.NftSource)
		b.WriteString(pairsText(r.Bad, r.NoImage))
	} else {
		fmt.Fprintf(&b, "%s, and the host's nft version is unknown while sets written with user data exist: if the host's nft is %s, ", img, writers(r.Suspect))
		b.WriteString(pairsText(r.Suspect, r.NoImage))
	}
	b.WriteString(setsText(r.Sets, h.SetsRead))
	return b.String()
}

// Fix says what removes the pair.
func (r Report) Fix() string {
	if !r.Problem() {
		return ""
	}
	if r.NoImage {
		return "run an iptables backend (backend: iptables-nft in /etc/rke2-proxy-backend/config.yaml), or put an nft first in kube-proxy's PATH (k3s's: a newer k3s's bundled one, or the host's with prefer-bundled-bin: false) that no row of " + DataFile + " pairs with the host's nft (docs/userspace-skew.md), or give the host an nft outside the writer range"
	}
	return "run an iptables backend (backend: iptables-nft in /etc/rke2-proxy-backend/config.yaml), or upgrade RKE2 to a release whose kube-proxy and image nft no row of " + DataFile + " pairs with the host's nft (docs/userspace-skew.md), or give the host an nft outside the writer range"
}

func pairsText(ps []Pair, noImage bool) string {
	reader := "image nft"
	if noImage {
		reader = "kube-proxy's nft"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s %s against sets written by nft %s: %s (%s)", reader, p.Reader.Words(), p.Writer.Words(), p.Fails, p.Refs())
	}
	return strings.Join(parts, "; ")
}

func writers(ps []Pair) string {
	ws := make([]string, len(ps))
	for i, p := range ps {
		ws[i] = p.Writer.Words()
	}
	return strings.Join(ws, " or ")
}

func setsText(sets []UserdataSet, read bool) string {
	switch {
	case !read:
		return "; the sets in the kernel were not read here"
	case len(sets) == 0:
		return "; no table kube-proxy does not own holds a set with user data now, but any program using the host's nft (firewalld, a CNI) writes them"
	}
	names := make([]string, 0, maxNamedSets)
	for i, s := range sets {
		if i == maxNamedSets {
			names = append(names, fmt.Sprintf("and %d more", len(sets)-maxNamedSets))
			break
		}
		names = append(names, s.String())
	}
	return "; sets with user data now in tables kube-proxy does not own: " + strings.Join(names, ", ")
}

// issueRef is an owner/repo#N reference in a source column.
var issueRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+`)
})

// Refs is the pair's source cut to its issue and pull request references,
// for a sentence; docs/userspace-skew.md and the data file say the rest.
func (p Pair) Refs() string {
	var refs []string
	for _, r := range issueRef().FindAllString(p.Source, -1) {
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	if len(refs) == 0 {
		return p.Source
	}
	return strings.Join(refs, ", ")
}
