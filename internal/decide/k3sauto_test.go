package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// onK3s makes f a k3s node of version with the host alternative alt and
// k3s config files (the operator's config.yaml, our drop-in).
func onK3s(f facts.Facts, version, alt string, files ...rke2.File) facts.Facts {
	f = withRKE2(f, version, files...)
	f.RKE2.Distribution, f.RKE2.ConfigFile, f.RKE2.DataDir = distro.Kind("k3s"), hostfs.K3sConfigFile, hostfs.K3sDataDir
	f.Userspace.IptablesAlternative = alt
	return f
}

var (
	k3sPreferOff  = rke2File(hostfs.K3sConfigFile, map[string]any{rke2.KeyPreferBundledBin: false})
	k3sRanIptable = rke2File(rke2.DropInPath(hostfs.K3sConfigFile), map[string]any{"kube-proxy-arg+": []string{"proxy-mode=iptables"}})
)

// reasonsHave fails unless d's reasons hold every want and none of not.
func reasonsHave(t *testing.T, name string, d Decision, want, not []string) {
	t.Helper()
	all := strings.Join(d.Reasons, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("%s: no reason with %q:\n%s", name, w, all)
		}
	}
	for _, w := range not {
		if strings.Contains(all, w) {
			t.Errorf("%s: a reason says %q:\n%s", name, w, all)
		}
	}
}

// On k3s kubelet runs inside k3s: its hint chains follow k3s's PATH
// iptables (the bundled one with prefer-bundled-bin, else the host's), so
// the host-alternative step says that, not RKE2's "kubelet writes its hint
// chains with the host's iptables".
func TestK3sHostAlternativeStep(t *testing.T) {
	const rke2Words = "and kubelet writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with it"
	for _, c := range []struct {
		name string
		f    facts.Facts
		want []string
	}{
		{"prefer-bundled-bin in effect", onK3s(debian12(), "v1.31.2+k3s1", "legacy"), []string{
			"The host's iptables command is iptables-legacy (/usr/sbin/iptables). On k3s kubelet runs inside k3s and, with prefer-bundled-bin, writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with k3s's bundled iptables (bin/aux), which follows IPTABLES_MODE",
		}},
		{"the operator turned it off", onK3s(debian12(), "v1.31.2+k3s1", "legacy", k3sPreferOff), []string{
			"The host's iptables command is iptables-legacy (/usr/sbin/iptables), and without prefer-bundled-bin it comes before k3s's bin/aux in k3s's PATH: kubelet (inside k3s) writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with it, and kube-proxy, flannel and kube-router run it too, so iptables-legacy is used.",
		}},
		{"k3s's version unknown (the generator)", func() facts.Facts {
			f := onK3s(debian12(), "v1.31.2+k3s1", "legacy")
			f.RKE2.Version, f.RKE2.Kubernetes = "", rke2.KubeVersion{}
			return f
		}(), []string{
			"The host's iptables command is iptables-legacy (/usr/sbin/iptables). On k3s kubelet runs inside k3s and writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with the iptables on k3s's PATH, as kube-proxy, flannel and kube-router do: k3s's bundled one (bin/aux, which follows IPTABLES_MODE) once apply sets prefer-bundled-bin, else this one",
		}},
	} {
		d := Decide(c.f, cfg(nil))
		if d.Backend != backend.IptablesLegacy {
			t.Errorf("%s: %s, want iptables-legacy", c.name, d.Backend)
		}
		reasonsHave(t, c.name, d, c.want, []string{rke2Words})
	}
	// RKE2 keeps its sentence.
	reasonsHave(t, "RKE2", Decide(debian12(), cfg(nil)), []string{rke2Words}, nil)
}

// prefer: [cheapest] keeps what k3s ran last time unless the saving is
// real. k3s's drop-in carries only proxy-mode; what ran is bin/aux's
// sticky link (prefer-bundled-bin) or the host's alternative (without).
func TestK3sCheapestKnowsWhatRanLastTime(t *testing.T) {
	close := map[backend.Backend]float64{backend.IptablesLegacy: 1.0, backend.IptablesNFT: 1.1}
	far := map[backend.Backend]float64{backend.IptablesLegacy: 1.1, backend.IptablesNFT: 21}
	stuck := func(f facts.Facts, target string) facts.Facts { f.RKE2.K3sAuxTarget = target; return f }
	ours := rke2.DropInPath(hostfs.K3sConfigFile)
	for _, c := range []struct {
		name string
		f    facts.Facts
		want backend.Backend
		why  []string
	}{
		{"links stuck on nft, a small saving: kept", measured(stuck(onK3s(debian12(), "v1.31.2+k3s1", "nft", k3sRanIptable), "xtables-nft-multi"), close), backend.IptablesNFT,
			[]string{"iptables-nft, which k3s ran with last time (per " + ours + " and bin/aux's iptables link, which k3s's last start stuck to xtables-nft-multi), is kept"}},
		{"links stuck on nft, a real saving: switched", measured(stuck(onK3s(debian12(), "v1.31.2+k3s1", "nft", k3sRanIptable), "xtables-nft-multi"), far), backend.IptablesLegacy,
			[]string{"iptables-legacy is cheaper than iptables-nft, which k3s ran with last time (per " + ours + " and bin/aux's iptables link",
				"The host's iptables command is iptables-nft; k3s's kubelet, kube-proxy, flannel and kube-router run k3s's bundled iptables (prefer-bundled-bin), which follows IPTABLES_MODE=legacy, so only the host's own rules stay in iptables-nft."}},
		{"without prefer-bundled-bin, a real saving: the host's alternative must follow", measured(onK3s(debian12(), "v1.31.2+k3s1", "nft", k3sRanIptable, k3sPreferOff), far), backend.IptablesLegacy,
			[]string{"The host's iptables command is iptables-nft, and without prefer-bundled-bin k3s's kubelet, kube-proxy, flannel and kube-router all run it: point it at iptables-legacy (update-alternatives --set iptables /usr/sbin/iptables-legacy, and ip6tables likewise)"}},
		{"without prefer-bundled-bin the host's alternative ran", measured(onK3s(debian12(), "v1.31.2+k3s1", "nft", k3sRanIptable, k3sPreferOff), close), backend.IptablesNFT,
			[]string{"iptables-nft, which k3s ran with last time (per " + ours + " and the host's iptables alternative, which k3s runs without prefer-bundled-bin), is kept"}},
	} {
		d := Decide(c.f, preferCheapest())
		if d.Backend != c.want {
			t.Errorf("%s: %s, want %s:\n%s", c.name, d.Backend, c.want, strings.Join(d.Reasons, "\n"))
		}
		reasonsHave(t, c.name, d, c.why, []string{"kubelet writes its hint chains with it"})
	}
}
