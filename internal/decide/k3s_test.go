package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// An operator's IPTABLES_MODE in the k3s unit's environment is kube-proxy's
// (it runs inside k3s): decide keeps it as RKE2's kube-proxy-extra-env pin,
// follows it even against respect_rke2_config: false when systemd applies
// it after the generator's drop-in (or it is an environment file, which
// beats every Environment=), and says what it does with it, file and line.
func TestK3sUnitIptablesModePin(t *testing.T) {
	const dropIn = "/etc/systemd/system/k3s.service.d/"
	for _, c := range []struct {
		name      string
		host      func(h *testhost.Host)
		backend   backend.Backend
		source    string
		respected string
		reason    string
	}{
		{"pinned legacy", func(h *testhost.Host) { h.K3sPinnedLegacy() }, backend.IptablesLegacy, SourceRKE2Config,
			"IPTABLES_MODE=legacy in " + dropIn + "10-iptables.conf line 2",
			"k3s's settings already pin IPTABLES_MODE=legacy in " + dropIn + "10-iptables.conf line 2, and respect_rke2_config is true, so iptables-legacy is kept"},
		{"pinned in the unit file", func(h *testhost.Host) { h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "", "IPTABLES_MODE=legacy") }, backend.IptablesLegacy, SourceRKE2Config,
			"IPTABLES_MODE=legacy in /etc/systemd/system/k3s.service line 31", "the generator's drop-in sets the same value, never another"},
		{"not pinned", func(h *testhost.Host) { h.K3sUnit("k3s", "server") }, backend.IptablesNFT, "auto", "", ""},
		{"respect_rke2_config: false, before ours", func(h *testhost.Host) {
			h.K3sPinnedLegacy().File(hostfs.ConfigFile, "respect_rke2_config: false\n")
		}, backend.IptablesNFT, "auto", "",
			"k3s's unit sets IPTABLES_MODE=legacy (" + dropIn + "10-iptables.conf line 2), but respect_rke2_config is false, so auto-detection decides and the generator's drop-in, which systemd applies later, overrides it."},
		{"respect_rke2_config: false, but after ours", func(h *testhost.Host) {
			h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "override.conf", "IPTABLES_MODE=legacy").File(hostfs.ConfigFile, "respect_rke2_config: false\n")
		}, backend.IptablesLegacy, SourceRKE2Config, "",
			"but override.conf sorts after the generator's drop-in (50-rke2-proxy-backend.conf), so systemd applies it later: k3s runs with it whatever this decision says, so iptables-legacy is planned to match"},
		{"install.sh's .env", func(h *testhost.Host) {
			h.K3sUnit("k3s", "server").File("/etc/systemd/system/k3s.service.env", "K3S_TOKEN=x\nIPTABLES_MODE=legacy\n")
		}, backend.IptablesLegacy, SourceRKE2Config, "IPTABLES_MODE=legacy in /etc/systemd/system/k3s.service.env line 2",
			"Warning: IPTABLES_MODE=legacy is in /etc/systemd/system/k3s.service.env line 2, which k3s's install.sh rewrites on every install or upgrade keeping only K3S_*, CONTAINERD_* and proxy variables, so it is lost then: move it to a drop-in of your own, e.g. /etc/systemd/system/k3s.service.d/10-iptables-mode.conf with [Service] and Environment=IPTABLES_MODE=legacy."},
		{"invalid, before ours", func(h *testhost.Host) {
			h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "10-iptables.conf", "IPTABLES_MODE=nftables")
		},
			backend.IptablesNFT, "auto", "",
			"k3s's unit sets IPTABLES_MODE=nftables (" + dropIn + "10-iptables.conf line 2), which k3s's bundled iptables (k3s-root's iptables-detect.sh) does not accept (only legacy and nft work; anything else makes every iptables call of kube-proxy, flannel and kube-router fail), so it is not kept, and the generator's drop-in, which systemd applies later, sets a working value over it."},
		{"invalid, after ours", func(h *testhost.Host) {
			h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "override.conf", "IPTABLES_MODE=nftables")
		},
			backend.IptablesNFT, "auto", "", "so k3s runs with it anyway: write legacy or nft there."},
		{"an override against a later pin", func(h *testhost.Host) {
			h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "override.conf", "IPTABLES_MODE=legacy").File(hostfs.ConfigFile, "backend: iptables-nft\n")
		}, backend.IptablesNFT, "config", "",
			"Warning: k3s's unit sets IPTABLES_MODE=legacy (" + dropIn + "override.conf line 2), and override.conf sorts after the generator's drop-in (50-rke2-proxy-backend.conf), so systemd applies it later: k3s runs kube-proxy, flannel and kube-router with it, not with iptables-nft; remove it there."},
		{"an override against an earlier pin", func(h *testhost.Host) {
			h.K3sPinnedLegacy().File(hostfs.ConfigFile, "backend: iptables-nft\n")
		}, backend.IptablesNFT, "config", "",
			"the generator's drop-in's IPTABLES_MODE=nft overrides it, because systemd applies the drop-in later."},
	} {
		h := testhost.New(t).Debian12()
		c.host(h)
		f, cfg := probed(t, h, facts.Options{Distribution: distro.Kind("k3s")}, nil)
		d := Decide(f, cfg)
		all := strings.Join(d.Reasons, "\n")
		if d.Backend != c.backend || d.Source != c.source {
			t.Errorf("%s: %s (source %s), want %s (%s):\n%s", c.name, d.Backend, d.Source, c.backend, c.source, all)
		}
		if c.respected != "" && !slices.Contains(d.Respected, c.respected) {
			t.Errorf("%s: respected %q, want %q", c.name, d.Respected, c.respected)
		}
		if !strings.Contains(all, c.reason) {
			t.Errorf("%s: no reason with %q:\n%s", c.name, c.reason, all)
		}
		if d.IptablesMode != c.backend.IptablesMode() {
			t.Errorf("%s: IPTABLES_MODE %q for the generator, want %q", c.name, d.IptablesMode, c.backend.IptablesMode())
		}
		if strings.Contains(all, "RKE2") {
			t.Errorf("%s: a k3s node's reasons name RKE2:\n%s", c.name, all)
		}
	}
}

// On k3s the reasons name whose iptables kube-proxy, flannel and
// kube-router run (k3s's bundled or the host's, by prefer-bundled-bin and
// the release) and where bin/aux's links point now.
func TestK3sIptablesReasons(t *testing.T) {
	for _, c := range []struct {
		name string
		host func(h *testhost.Host)
		want []string
	}{
		{"before the first start, version unknown", func(h *testhost.Host) {}, []string{
			"k3s's version is not known here: apply asks the k3s binary and sets prefer-bundled-bin where the release knows it",
			"k3s has not extracted its bundled iptables (bin/aux) yet: on its first start iptables-detect.sh honours IPTABLES_MODE=legacy and links bin/aux's iptables to xtables-legacy-multi.",
		}},
		{"links stuck on the other mode", func(h *testhost.Host) { h.K3sAux("xtables-nft-multi") }, []string{
			"bin/aux's iptables links point at xtables-nft-multi, where an earlier start stuck them: apply resets them to iptables-detect.sh before k3s starts, so IPTABLES_MODE=legacy takes effect.",
		}},
		{"links on the planned mode", func(h *testhost.Host) { h.K3sAux("xtables-legacy-multi") }, []string{
			"bin/aux's iptables links point at xtables-legacy-multi (an earlier start chose it, and the choice sticks), the planned mode.",
		}},
		{"the operator turned prefer-bundled-bin off", func(h *testhost.Host) {
			h.K3sConfig("config.yaml", "prefer-bundled-bin: false\n").
				K3sConfig("config.yaml.d/60-proxy-backend.yaml", "# Generated by rke2-proxy-backend; do not edit\nprefer-bundled-bin: true\n")
		}, []string{
			"k3s's config sets prefer-bundled-bin: false in /etc/rancher/k3s/config.yaml, so the host's iptables (iptables-nft) comes first in k3s's PATH and IPTABLES_MODE does not steer it: it must be iptables-legacy too",
		}},
	} {
		h := testhost.New(t).Debian12().K3sPinnedLegacy()
		c.host(h)
		f, cfg := probed(t, h, facts.Options{Distribution: distro.Kind("k3s")}, nil)
		all := strings.Join(Decide(f, cfg).Reasons, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no reason with %q:\n%s", c.name, w, all)
			}
		}
	}
}

// The sentences k3s shares with RKE2 name k3s on a k3s node, in the words
// decide writes them with (nothing rewrites them afterwards).
func TestK3sSharedSentencesNameK3s(t *testing.T) {
	for _, c := range []struct {
		name, config, k3sConfig, want string
	}{
		{"off", "backend: off\n", "", "k3s runs kube-proxy with its own defaults"},
		{"proxy-mode pinned", "", "kube-proxy-arg:\n  - proxy-mode=iptables\n", "k3s's config sets proxy-mode=iptables in /etc/rancher/k3s/config.yaml"},
		{"a taint", "node_taint: rke2-proxy-backend/backend=iptables-legacy:NoSchedule\n", "", "so k3s adds no taint"},
	} {
		h := testhost.New(t).Debian12().K3sUnit("k3s", "server")
		if c.config != "" {
			h.File(hostfs.ConfigFile, c.config)
		}
		if c.k3sConfig != "" {
			h.K3sConfig("config.yaml", c.k3sConfig)
		}
		f, cfg := probed(t, h, facts.Options{Distribution: distro.Kind("k3s")}, nil)
		all := strings.Join(Decide(f, cfg).Reasons, "\n")
		if !strings.Contains(all, c.want) || strings.Contains(all, "RKE2's config") || strings.Contains(all, "RKE2 runs") {
			t.Errorf("%s: reasons\n%s\nwant %q, and no RKE2 words", c.name, all, c.want)
		}
	}
}
