package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On k3s, nftables mode is judged by the nft kube-proxy would exec on
// k3s's PATH (found on the fixture root by the real probe), never by
// RKE2's kube-proxy image table, and the reasons name that nft.
func TestK3sNFTablesByTheNftOnK3sPath(t *testing.T) {
	const aux = "/var/lib/rancher/k3s/data/0123abcd/bin/aux"
	const auxNft = "/var/lib/rancher/k3s/data/current/bin/aux/nft"
	nft := func(v string) string { return "#!/bin/sh\necho 'nftables v" + v + " (x)'\n" }
	for _, c := range []struct {
		name    string
		host    func(h *testhost.Host)
		want    backend.Backend
		reasons []string
		not     []string
	}{
		{"v1.31.2 with k3s-root's nft: RKE2's image table does not apply", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.31.2+k3s1").K3sAux("iptables-detect.sh").Executable(aux+"/nft", nft("1.1.0"))
		}, backend.NFTables, []string{
			"kube-proxy's nftables mode runs inside k3s and execs nft from k3s's PATH: " + auxNft + ", k3s's bundled nft (k3s-root's, in bin/aux) (nft 1.1.0, per " + auxNft + " --version), since prefer-bundled-bin puts k3s's bin/aux before the host's dirs in k3s's PATH.",
			"On k3s, flannel and kube-router's network policy keep writing iptables rules beside kube-proxy's nftables mode",
		}, []string{"kube-proxy image", "RKE2 runs", "HelmChartConfig", "RKE2 documents"}},
		{"no nft anywhere on k3s's PATH", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.33.5+k3s1").K3sAux("iptables-detect.sh")
		}, backend.IptablesNFT, []string{
			"The prefer list puts nftables first, but no nft is on k3s's PATH for kube-proxy's nftables mode to run: none in k3s's bin/aux (" + auxNft + "; k3s-root ships one from v0.14.1 on) nor in the host's PATH (/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin); install the host's nftables package or upgrade k3s, so an iptables backend is used.",
		}, nil},
		{"prefer-bundled-bin off: the host's nft comes first", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.33.5+k3s1").K3sAux("iptables-detect.sh").Executable(aux+"/nft", nft("1.1.0")).
				Executable("/usr/sbin/nft", nft("1.0.6")).K3sConfig("config.yaml", "prefer-bundled-bin: false\n")
		}, backend.NFTables, []string{
			"execs nft from k3s's PATH: /usr/sbin/nft, the host's nft (nft 1.0.6, per /usr/sbin/nft --version), since without prefer-bundled-bin k3s's PATH puts the host's dirs before bin/aux.",
		}, nil},
		{"the host's nft that would run is too old", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.33.5+k3s1").K3sAux("iptables-detect.sh").
				Executable("/usr/sbin/nft", nft("0.9.8")).K3sConfig("config.yaml", "prefer-bundled-bin: false\n")
		}, backend.IptablesNFT, []string{
			"the nft kube-proxy would run on k3s's PATH, /usr/sbin/nft (the host's nft), is 0.9.8 (per /usr/sbin/nft --version), older than 1.0.1",
		}, nil},
		{"k3s-root's nft 1.1.0 reads the host nft 1.1.3's sets: the skew pair is judged with k3s's reader", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.34.5+k3s1").K3sAux("iptables-detect.sh").Executable(aux+"/nft", nft("1.1.0")).
				Executable("/usr/sbin/nft", nft("1.1.3"))
		}, backend.IptablesNFT, []string{
			"The prefer list puts nftables first, but kube-proxy runs nft 1.1.0 (" + auxNft + " on k3s's PATH, per " + auxNft + " --version) and the host's nft is 1.1.3 (per /usr/sbin/nft --version), a known-bad pair: kube-proxy's nft 1.1.1 or older against sets written by nft 1.1.2 or later",
		}, nil},
		{"before k3s's first start, no host nft: assumed, not confirmed", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.33.5+k3s1")
		}, backend.NFTables, []string{
			"Support for nftables is assumed, not confirmed: k3s has not extracted its binaries yet, so whether its bin/aux holds the nft kube-proxy's nftables mode runs (k3s-root ships one from v0.14.1 on) cannot be told, and no nft is in the host's PATH",
		}, nil},
		{"before k3s's first start, with a host nft", func(h *testhost.Host) {
			h.K3sBinary("/usr/local/bin/k3s", "v1.33.5+k3s1").Executable("/usr/sbin/nft", nft("1.0.6"))
		}, backend.NFTables, []string{
			"execs nft from k3s's PATH: /usr/sbin/nft, the host's nft",
			"k3s has not extracted its binaries yet: if its bin/aux holds an nft (k3s-root v0.14.1 and later), that one runs instead.",
		}, nil},
	} {
		h := testhost.New(t).Debian12().K3sUnit("k3s", "server").File(hostfs.ConfigFile, "prefer: [nftables, iptables-nft]\n")
		c.host(h)
		f, cfg := probed(t, h, facts.Options{Distribution: distro.Kind("k3s"), RKE2Binary: true, AskNft: true}, nil)
		d := Decide(f, cfg)
		if d.Backend != c.want {
			t.Errorf("%s: %s, want %s:\n%s", c.name, d.Backend, c.want, strings.Join(d.Reasons, "\n"))
		}
		reasonsHave(t, c.name, d, c.reasons, c.not)
	}
}
