package decide

import (
	"fmt"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// embedded reports whether kube-proxy runs inside the distribution's own
// process (k3s; distro.Profile.KubeProxyEmbedded): the operator's
// IPTABLES_MODE is then in the unit's environment, not in a
// kube-proxy-extra-env, and it is pinned exactly as RKE2's is; kubelet,
// kube-proxy and the CNI writers run the iptables on the process's PATH.
func embedded(f facts.Facts) bool { return f.RKE2.Distribution.Profile().KubeProxyEmbedded }

// wins says why the operator's IPTABLES_MODE is what k3s runs with
// whatever the generator's drop-in says, "" when ours is applied after it.
func wins(s *facts.UnitEnvSetting) string {
	switch {
	case s.EnvFile:
		return fmt.Sprintf("%s is an environment file, whose variables systemd puts over every Environment= (the generator's drop-in's too)", s.File)
	case s.AfterOurs:
		return fmt.Sprintf("%s sorts after the generator's drop-in (%s), so systemd applies it later", path.Base(s.File), hostfs.UnitDropInName)
	}
	return ""
}

// respectK3sEnv keeps the k3s unit's IPTABLES_MODE, or says why not.
// handled is false when a pinned proxy-mode other than iptables decides
// instead, as on RKE2; ok is false when the caller goes on to auto.
func (s *state) respectK3sEnv() (b backend.Backend, ok, handled bool) {
	env := s.pins.k3sEnv
	if env == nil {
		return "", false, false
	}
	b = byIptablesMode(s.pins.iptablesMode)
	if why := wins(env); why != "" && !s.c.RespectRKE2Config {
		s.d.Source = SourceRKE2Config
		s.say("k3s's unit sets IPTABLES_MODE=%s (%s), and respect_rke2_config is false, but %s: k3s runs with it whatever this decision says, so %s is planned to match; to let auto-detection decide, remove it there.", env.Value, env.Where(), why, b)
		return b, true, true
	}
	if !s.c.RespectRKE2Config {
		s.say("k3s's unit sets IPTABLES_MODE=%s (%s), but respect_rke2_config is false, so auto-detection decides and the generator's drop-in, which systemd applies later, overrides it.", env.Value, env.Where())
		return "", false, true
	}
	if s.pins.proxyMode != "" && s.pins.proxyMode != "iptables" {
		return "", false, false
	}
	cp := s.caps[b]
	if cp.support == unsupported && cp.kernel && wins(env) == "" {
		s.refusePin(b, cp.why)
		return "", false, true
	}
	s.d.Source = SourceRKE2Config
	s.say("k3s's settings already pin %s, and respect_rke2_config is true, so %s is kept: kube-proxy runs inside k3s, so the unit's IPTABLES_MODE is kube-proxy's (and flannel's and kube-router's), and the generator's drop-in sets the same value, never another.", strings.Join(s.pins.text(), " and "), b)
	if cp.support == unsupported {
		// Where the unit's value wins, refusing it would plan a backend
		// k3s never runs.
		s.say("Warning: %s, so kube-proxy is likely to fail: change IPTABLES_MODE in %s, or set respect_rke2_config: false to let auto-detection decide.", cp.why, env.File)
	}
	return b, true, true
}

// sayK3sEnv says what becomes of the unit's IPTABLES_MODE when the
// backend came from elsewhere (an override), and warns about one that
// will not last.
func (s *state) sayK3sEnv(b backend.Backend) {
	env := s.pins.k3sEnv
	if env == nil {
		return
	}
	if mode := b.IptablesMode(); env.Value != mode {
		if why := wins(env); why != "" {
			s.say("Warning: k3s's unit sets IPTABLES_MODE=%s (%s), and %s: k3s runs kube-proxy, flannel and kube-router with it, not with %s; remove it there.", env.Value, env.Where(), why, b)
		} else if s.c.RespectRKE2Config {
			s.say("k3s's unit sets IPTABLES_MODE=%s (%s); the generator's drop-in's IPTABLES_MODE=%s overrides it, because systemd applies the drop-in later.", env.Value, env.Where(), mode)
		}
	}
	if !env.Rewritten {
		return
	}
	unit := strings.TrimSuffix(path.Base(env.File), ".env")
	s.say("Warning: IPTABLES_MODE=%s is in %s, which k3s's install.sh rewrites on every install or upgrade keeping only K3S_*, CONTAINERD_* and proxy variables, so it is lost then: move it to a drop-in of your own, e.g. %s with [Service] and Environment=IPTABLES_MODE=%s.",
		env.Value, env.Where(), path.Join(path.Dir(env.File), unit+".d", "10-iptables-mode.conf"), env.Value)
}

// invalidK3sEnv is dropInvalidIptablesMode's sentence on k3s.
func invalidK3sEnv(env *facts.UnitEnvSetting) string {
	out := fmt.Sprintf("k3s's unit sets IPTABLES_MODE=%s (%s), which k3s's bundled iptables (k3s-root's iptables-detect.sh) does not accept (only legacy and nft work; anything else makes every iptables call of kube-proxy, flannel and kube-router fail), so it is not kept", env.Value, env.Where())
	if why := wins(env); why != "" {
		return out + "; but " + why + ", so k3s runs with it anyway: write legacy or nft there."
	}
	return out + ", and the generator's drop-in, which systemd applies later, sets a working value over it."
}

// sayK3sIptables names the k3s facts behind an iptables backend: whose
// iptables kube-proxy, flannel and kube-router run (k3s's bundled one in
// bin/aux, which honours IPTABLES_MODE, or the host's, first in k3s's
// PATH without prefer-bundled-bin), and where bin/aux's links point.
func (s *state) sayK3sIptables(b backend.Backend) {
	f := s.f
	mode := b.IptablesMode()
	host := "the host's iptables, if installed, comes first in k3s's PATH"
	if alt := f.Userspace.IptablesAlternative; alt == "legacy" || alt == "nft" {
		host = fmt.Sprintf("the host's iptables (%s) comes first in k3s's PATH", byIptablesMode(alt))
	}
	op, set := f.RKE2.Config.LastExcept(rke2.KeyPreferBundledBin, ourDropIn(f))
	v := f.RKE2.Kubernetes
	switch {
	case set && op.Value == "true":
		s.say("k3s's config sets %s: true in %s, so kube-proxy, flannel and kube-router run k3s's bundled iptables (bin/aux, k3s-root's iptables-detect.sh), which honours IPTABLES_MODE=%s.", rke2.KeyPreferBundledBin, op.File, mode)
	case set:
		s.say("k3s's config sets %s: %s in %s, so %s and IPTABLES_MODE does not steer it: it must be %s too, or kube-proxy, flannel and kube-router write to another backend than planned.", rke2.KeyPreferBundledBin, op.Value, op.File, host, b)
	case rke2.SupportsPreferBundledBin(v):
		s.say("k3s %s knows %s, which apply sets: kube-proxy, flannel and kube-router run k3s's bundled iptables (bin/aux, k3s-root's iptables-detect.sh), which honours IPTABLES_MODE=%s, not the host's.", rke2Name(f), rke2.KeyPreferBundledBin, mode)
	case !v.Known():
		s.say("k3s's version is not known here: apply asks the k3s binary and sets %s where the release knows it (k3s's bundled iptables then honours IPTABLES_MODE=%s); without it %s and must be %s too.", rke2.KeyPreferBundledBin, mode, host, b)
	default:
		s.say("k3s %s predates %s (v1.26.0, v1.25.5, v1.24.9, v1.23.15), so %s and IPTABLES_MODE steers only k3s's bundled iptables: the host's must be %s too.", rke2Name(f), rke2.KeyPreferBundledBin, host, b)
	}
	want := "xtables-" + mode + "-multi"
	switch t := f.RKE2.K3sAuxTarget; {
	case t == "":
		s.say("k3s has not extracted its bundled iptables (bin/aux) yet: on its first start iptables-detect.sh honours IPTABLES_MODE=%s and links bin/aux's iptables to %s.", mode, want)
	case t == want:
		s.say("bin/aux's iptables links point at %s (an earlier start chose it, and the choice sticks), the planned mode.", t)
	case t == "xtables-legacy-multi" || t == "xtables-nft-multi":
		s.say("bin/aux's iptables links point at %s, where an earlier start stuck them: apply resets them to iptables-detect.sh before k3s starts, so IPTABLES_MODE=%s takes effect.", t, mode)
	default:
		s.say("bin/aux's iptables links point at %s, so IPTABLES_MODE=%s decides on k3s's next start.", t, mode)
	}
}

// sayK3sHostAlternative is the host-alternative step's sentence on k3s,
// where kubelet runs inside k3s and writes its hint chains with the
// iptables on k3s's PATH, as kube-proxy, flannel and kube-router do: with
// prefer-bundled-bin that is k3s's bundled one, which follows
// IPTABLES_MODE, so the host's alternative binds nothing of k3s's and
// only keeps the node's rules (the host's own firewall's too) in one
// backend; without it the host's iptables is what all of k3s runs.
func (s *state) sayK3sHostAlternative(b backend.Backend, where string) {
	yes, known := k3sPrefersBundled(s.f)
	if !known {
		s.say("The host's iptables command is %s%s. On k3s kubelet runs inside k3s and writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with the iptables on k3s's PATH, as kube-proxy, flannel and kube-router do: k3s's bundled one (bin/aux, which follows IPTABLES_MODE) once apply sets prefer-bundled-bin, else this one (k3s's version, which tells, is not known here), so %s is used, which holds either way.", b, where, b)
		return
	}
	if yes {
		s.say("The host's iptables command is %s%s. On k3s kubelet runs inside k3s and, with prefer-bundled-bin, writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with k3s's bundled iptables (bin/aux), which follows IPTABLES_MODE as kube-proxy's, flannel's and kube-router's does, so they land in the planned backend either way; %s is used so the host's own iptables rules (a firewall's) sit in the same backend.", b, where, b)
		return
	}
	s.say("The host's iptables command is %s%s, and without prefer-bundled-bin it comes before k3s's bin/aux in k3s's PATH: kubelet (inside k3s) writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with it, and kube-proxy, flannel and kube-router run it too, so %s is used.", b, where, b)
}

// sayK3sOtherAlternative is what cheapest says on k3s when the host's
// iptables alternative (alt) is not the chosen backend's.
func (s *state) sayK3sOtherAlternative(alt, chosen backend.Backend) {
	if yes, _ := k3sPrefersBundled(s.f); yes {
		s.say("The host's iptables command is %s; k3s's kubelet, kube-proxy, flannel and kube-router run k3s's bundled iptables (prefer-bundled-bin), which follows IPTABLES_MODE=%s, so only the host's own rules stay in %s.", alt, chosen.IptablesMode(), alt)
		return
	}
	s.say("The host's iptables command is %s, and without prefer-bundled-bin k3s's kubelet, kube-proxy, flannel and kube-router all run it: point it at %s (update-alternatives --set iptables /usr/sbin/iptables-%s, and ip6tables likewise), or they write to %s, not the planned backend.", alt, chosen, chosen.IptablesMode(), alt)
}

// k3sRanLastTime is ranLastTime's iptables variant on k3s, whose drop-in
// (ours, which says proxy-mode=iptables) carries no IPTABLES_MODE: that
// is the unit's, in a generator drop-in under /run that does not outlive
// the boot. What persists is what k3s's iptables used: with
// prefer-bundled-bin, bin/aux's links, which k3s-root's iptables-detect.sh
// stuck to xtables-<mode>-multi at the last start (apply resets them on a
// change, and then nothing tells); without it, the host's iptables
// alternative, first in k3s's PATH.
func k3sRanLastTime(f facts.Facts, ours string) (backend.Backend, string) {
	yes, known := k3sPrefersBundled(f)
	if yes || !known {
		// A stuck link means the bundled iptables ran: the links move
		// only when iptables-detect.sh runs.
		switch t := f.RKE2.K3sAuxTarget; t {
		case "xtables-legacy-multi", "xtables-nft-multi":
			mode := strings.TrimSuffix(strings.TrimPrefix(t, "xtables-"), "-multi")
			return byIptablesMode(mode), fmt.Sprintf("%s and bin/aux's iptables link, which k3s's last start stuck to %s", ours, t)
		}
		return "", ""
	}
	if alt := f.Userspace.IptablesAlternative; alt == "legacy" || alt == "nft" {
		return byIptablesMode(alt), fmt.Sprintf("%s and the host's iptables alternative, which k3s runs without prefer-bundled-bin", ours)
	}
	return "", ""
}
