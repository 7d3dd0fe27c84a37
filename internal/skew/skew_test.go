package skew

import (
	"strings"
	"testing"
)

func host(release, kube, nft string, sets ...UserdataSet) Host {
	h := Host{Release: release, NftSource: "/var/lib/dpkg/status (package nftables)", Sets: sets, SetsRead: true}
	if kube != "" {
		h.Kubernetes = MustVersion(kube)
	}
	if nft != "" {
		h.Nft = MustVersion(nft)
	}
	return h
}

// onK3s makes kube-proxy's nft the one on k3s's PATH, of version reader.
func onK3s(h Host, reader string) Host {
	h.Reader, h.ReaderSource = MustVersion(reader), "/var/lib/rancher/k3s/data/current/bin/aux/nft on k3s's PATH, per its --version"
	return h
}

var firewalldSet = UserdataSet{Family: "inet", Table: "firewalld", Name: "allowed-ips", Kinds: []string{"key-byteorder", "comment"}}

func TestJudge(t *testing.T) {
	tab := Default()
	for name, tc := range map[string]struct {
		h            Host
		bad, suspect int
		want         []string
	}{
		// v1.34.5's kube-proxy predates kubernetes#137501 (1.34.7) and its
		// image has nft 1.1.0; Debian trixie's nft is 1.1.3.
		"trixie under v1.34.5": {h: host("v1.34.5+rke2r1", "1.34.5", "1.1.3", firewalldSet), bad: 1,
			want: []string{"RKE2 v1.34.5+rke2r1's kube-proxy image has nft 1.1.0 (k3s-root v0.15.0", "the host's nft is 1.1.3 (per /var/lib/dpkg/status (package nftables)), a known-bad pair",
				"image nft 1.1.1 or older against sets written by nft 1.1.2 or later", "kubernetes/kubernetes#137501", "inet firewalld set allowed-ips"}},
		"fixed kube-proxy": {h: host("v1.34.8+rke2r1", "1.34.8", "1.1.3", firewalldSet)},
		"bookworm host":    {h: host("v1.34.5+rke2r1", "1.34.5", "1.0.6", firewalldSet)},
		"unknown release":  {h: host("v1.99.0+rke2r1", "1.99.0", "1.1.3", firewalldSet)},
		"host nft unknown, sets": {h: host("v1.33.5+rke2r1", "1.33.5", "", firewalldSet), suspect: 1,
			want: []string{"the host's nft version is unknown while sets written with user data exist: if the host's nft is 1.1.2 or later"}},
		"host nft unknown, no sets": {h: host("v1.33.5+rke2r1", "1.33.5", "")},
		// k3s runs no image: the nft on its PATH (k3s-root's 1.1.0) reads.
		"k3s's bundled nft under trixie": {h: onK3s(host("v1.34.5+k3s1", "1.34.5", "1.1.3", firewalldSet), "1.1.0"), bad: 1,
			want: []string{"kube-proxy runs nft 1.1.0 (/var/lib/rancher/k3s/data/current/bin/aux/nft on k3s's PATH, per its --version) and the host's nft is 1.1.3",
				"kube-proxy's nft 1.1.1 or older against sets written by nft 1.1.2 or later"}},
		"k3s's bundled nft, fixed kube-proxy": {h: onK3s(host("v1.34.8+k3s1", "1.34.8", "1.1.3", firewalldSet), "1.1.0")},
		"k3s running the host's nft":          {h: onK3s(host("v1.34.5+k3s1", "1.34.5", "1.1.3", firewalldSet), "1.1.3")},
	} {
		r := Judge(tab, tc.h)
		if len(r.Bad) != tc.bad || len(r.Suspect) != tc.suspect {
			t.Errorf("%s: %d bad, %d suspect pairs, want %d, %d: %+v", name, len(r.Bad), len(r.Suspect), tc.bad, tc.suspect, r)
			continue
		}
		why := r.Why(tc.h)
		if r.Problem() != (why != "") || r.Problem() != (r.Fix() != "") {
			t.Errorf("%s: Problem %v but why %q, fix %q", name, r.Problem(), why, r.Fix())
		}
		for _, w := range tc.want {
			if !strings.Contains(why, w) {
				t.Errorf("%s: why %q\nwants %q", name, why, w)
			}
		}
	}
}

// A pair row for readers 1.0.1-1.0.5 matches every kube-proxy: a table
// with such an image gets the finding whatever the Kubernetes version.
func TestJudgeOldReader(t *testing.T) {
	tab, err := ParseTable(imagesTSV+"k3s-root\tv0.0.1\t1.0.4\tyes\t1.8.9\ttest row\nimage\tv1.36.9+rke2r1\tv0.0.1\ttest row\n", "t")
	if err != nil {
		t.Fatal(err)
	}
	h := host("v1.36.9+rke2r1", "", "1.0.6.1")
	h.SetsRead = false
	r := Judge(tab, h)
	if len(r.Bad) != 1 || !strings.Contains(r.Why(h), "the sets in the kernel were not read here") {
		t.Fatalf("%+v: %s", r, r.Why(h))
	}
	h.Sets, h.SetsRead = nil, true
	if why := Judge(tab, h).Why(h); !strings.Contains(why, "no table kube-proxy does not own holds a set with user data now") {
		t.Errorf("why %q", why)
	}
}
