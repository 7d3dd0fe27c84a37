package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// usable reports whether auto may pick b: a backend name, allowed by RKE2's
// pins and not ruled out by a fact.
func (s *state) usable(b backend.Backend) bool {
	if !slices.Contains(backend.All, b) {
		return false // a corrupt plan.json or an unexpected probe value
	}
	if s.iptablesOnly && b == backend.NFTables {
		return false
	}
	return s.caps[b].support != unsupported
}

// auto follows DESIGN.md's order: what already runs, legacy triggers, what
// the kernel can run, the host's iptables alternative, then prefer.
func (s *state) auto() backend.Backend {
	if s.d.Source == "" {
		s.d.Source = config.SourceAuto
	}
	if (kernelView{k: s.f.Kernel, m: s.f.Modules}).nothingKnown() {
		s.say("No kernel config and no module lists could be read, so every backend is assumed to work.")
	}
	if p := backend.Backend(s.f.PreviousPlan); p != "" && s.usable(p) {
		s.say("This boot already applied %s (recorded in %s) and kube-proxy runs with it, so it is kept: a daemon-reload must not switch a running node.", p, hostfs.PlanFile)
		return p
	}
	if live := s.f.LiveRules; live.Probed {
		switch {
		case len(live.KubeProxy) == 1 && s.usable(backend.Backend(live.KubeProxy[0])):
			b := backend.Backend(live.KubeProxy[0])
			s.say("Live kube-proxy rules are in %s right now, so it is kept: switching would strand them there.", b)
			return b
		case len(live.KubeProxy) > 1:
			s.say("Live kube-proxy rules are in more than one backend (%s), so they cannot tell which one to keep.", strings.Join(live.KubeProxy, ", "))
		}
	}
	if matched := matchTriggers(s.c.LegacyTriggers, s.f); len(matched) > 0 {
		if s.usable(backend.IptablesLegacy) {
			s.say("The legacy trigger %s, so iptables-legacy is used.", strings.Join(matched, "; "))
			return backend.IptablesLegacy
		}
		s.say("The legacy trigger %s, but %s, so the trigger is ignored.", strings.Join(matched, "; "), s.caps[backend.IptablesLegacy].why)
	}
	if b, ok := s.cheapest(); ok {
		return b
	}
	if len(s.c.Prefer) > 0 && s.c.Prefer[0] == backend.NFTables && s.underIPVS() {
		s.say("The prefer list puts nftables first, but %s's config sets proxy-mode=ipvs in %s, and under ipvs only an iptables backend can be chosen (to run nftables, migrate off ipvs first, see the ipvs reason below), so an iptables backend is used.", s.name(), s.pins.proxyModeFile)
	}
	if len(s.c.Prefer) > 0 && s.c.Prefer[0] == backend.NFTables && !s.iptablesOnly {
		if s.usable(backend.NFTables) {
			if why := skewBlocksChoice(s.f); why != "" {
				s.say("The prefer list puts nftables first, but %s, so an iptables backend is used.", why)
				return s.autoIptables()
			}
			s.say("The prefer list puts nftables first, and kernel %s with Kubernetes %s can run kube-proxy's nftables mode.", s.f.Kernel.Release, s.f.RKE2.Kubernetes)
			return backend.NFTables
		}
		s.say("The prefer list puts nftables first, but %s, so an iptables backend is used.", s.caps[backend.NFTables].why)
	}
	return s.autoIptables()
}

// autoIptables chooses between the two iptables backends.
func (s *state) autoIptables() backend.Backend {
	legacy, nft := s.usable(backend.IptablesLegacy), s.usable(backend.IptablesNFT)
	switch {
	case legacy && !nft:
		s.say("%s, so only iptables-legacy can work.", capital(s.caps[backend.IptablesNFT].why))
		return backend.IptablesLegacy
	case nft && !legacy:
		s.say("%s, so only iptables-nft can work.", capital(s.caps[backend.IptablesLegacy].why))
		return backend.IptablesNFT
	case !legacy && !nft:
		if s.usable(backend.NFTables) {
			s.say("Neither iptables backend can work (%s; %s), so kube-proxy's nftables mode is used.", s.caps[backend.IptablesLegacy].why, s.caps[backend.IptablesNFT].why)
			return backend.NFTables
		}
		s.say("No backend can work on this host as far as the facts show (%s; %s); iptables-nft, the usual choice, is named here, but apply gives RKE2 no backend of ours (on_failure decides whether RKE2 starts on its own defaults) and kube-proxy will probably fail until the kernel is fixed.", s.caps[backend.IptablesLegacy].why, s.caps[backend.IptablesNFT].why)
		return backend.IptablesNFT
	}
	if s.caps[backend.IptablesLegacy].support == supported && s.caps[backend.IptablesNFT].support == supported {
		s.say("The kernel can run both iptables-legacy and iptables-nft%s.", evidenceSuffix(s.f.Kernel.ConfigSource))
	}
	u := s.f.Userspace
	switch u.IptablesAlternative {
	case "legacy", "nft":
		b := byIptablesMode(u.IptablesAlternative)
		where := ""
		if u.IptablesPath != "" {
			where = " (" + u.IptablesPath + ")"
		}
		if embedded(s.f) {
			s.sayK3sHostAlternative(b, where)
			return b
		}
		s.say("The host's iptables command is %s%s, and kubelet writes its KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY chains with it, so kube-proxy uses the same backend.", b, where)
		return b
	}
	if live := s.f.LiveRules; live.Probed && len(live.KubeletHint) == 1 && slices.Contains([]string{string(backend.IptablesLegacy), string(backend.IptablesNFT)}, live.KubeletHint[0]) {
		b := backend.Backend(live.KubeletHint[0])
		s.say("The kubelet's KUBE-IPTABLES-HINT chain is in %s, so kube-proxy uses the same backend.", b)
		return b
	}
	for _, p := range s.c.Prefer {
		if p != backend.NFTables && s.usable(p) {
			s.say("Both iptables backends can work and nothing on the host favours one, so prefer's first choice, %s, is used.", p)
			return p
		}
	}
	s.say("Both iptables backends can work and prefer names neither, so iptables-nft is used.")
	return backend.IptablesNFT
}

// finish fills in what follows from the backend: modules, kube-proxy args
// and env, node label, and the remaining reasons.
func (s *state) finish(b backend.Backend) {
	d := s.d
	d.Backend, d.ProxyMode, d.IptablesMode, d.Modules = b, b.ProxyMode(), b.IptablesMode(), preloads(b, s.f)
	if s.underIPVS() {
		d.ProxyMode = ProxyModeIPVS
	}
	if cp := s.caps[b]; cp.support == unconfirmed && !(kernelView{k: s.f.Kernel, m: s.f.Modules}).nothingKnown() {
		s.say("Support for %s is assumed, not confirmed: %s.", b, cp.why)
	}
	s.skewWarning(b)
	s.detectHostWarning(b) // kube-proxy 1.38+ picks its iptables flavour itself (detecthost.go)
	if s.underIPVS() {
		// Never written: the operator's proxy-mode=ipvs stays the last one.
		s.respect(fmt.Sprintf("proxy-mode=%s in %s", ProxyModeIPVS, s.pins.proxyModeFile))
	} else {
		s.setting(&d.KubeProxyArgs, "proxy-mode", d.ProxyMode, s.pins.proxyMode, s.pins.proxyModeFile)
	}
	if s.pins.miscasedGate != "" {
		s.say("%s's config passes %q in %s: kube-proxy's gate names are case-sensitive, so it knows no such gate and will not start; write %s.", s.name(),
			s.pins.miscasedGate, s.pins.miscasedGateFile, nftablesGate)
	}
	if b == backend.NFTables && needsGate(s.f.RKE2.Kubernetes) && !s.pins.gate {
		d.KubeProxyArgs = append(d.KubeProxyArgs, "feature-gates="+nftablesGate)
		s.say("Kubernetes %s needs the feature gate %s for nftables mode, so it is added.", s.f.RKE2.Kubernetes, nftablesGate)
	}
	d.KubeProxyArgs = append(d.KubeProxyArgs, s.extraArgs(d.ProxyMode)...)
	s.setting(&d.KubeProxyEnv, "IPTABLES_MODE", d.IptablesMode, s.pins.iptablesMode, s.pins.iptablesModeFile)
	if embedded(s.f) && b.UsesIptables() {
		s.sayK3sEnv(b)
		s.sayK3sIptables(b)
	}
	if s.underIPVS() {
		s.finishIPVS(b)
	}
	if s.c.NodeLabel {
		d.NodeLabels = []string{NodeLabelKey + "=" + string(b)}
	}
	d.NodeTaints = nodeTaints(s, b)
	if b == backend.NFTables {
		if embedded(s.f) {
			s.sayK3sNft()
		}
		s.say("%s", cniReason(s.f, s.f.RKE2.ManifestsDir()))
	}
	if live := s.f.LiveRules; live.Probed {
		for _, other := range live.KubeProxy {
			if other != string(b) {
				s.say("The kube-proxy rules in %s are stranded once kube-proxy runs on %s: remove them with `rke2-proxy-backend cleanup --backend %s`.", other, b, other)
			}
		}
	}
}

// setting writes name=value into list (kube-proxy's args or env), unless
// the operator pinned name in RKE2's config (pin, in file) and the decision
// keeps such pins: when it came from RKE2's config itself, or when RKE2's
// config pins proxy-mode=iptables and only the iptables variant was ours
// to choose. A different
// pin the drop-in overrides is said, since RKE2 reads the drop-in later.
func (s *state) setting(list *[]string, name, value, pin, file string) {
	if pin != "" && s.c.RespectRKE2Config && (s.d.Source == SourceRKE2Config || s.iptablesOnly) {
		s.respect(fmt.Sprintf("%s=%s in %s", name, pin, file))
		return
	}
	*list = append(*list, name+"="+value)
	if s.pins.k3sEnv != nil && name == "IPTABLES_MODE" {
		return // respectK3sEnv said what becomes of the unit's value
	}
	if pin != "" && pin != value {
		s.say("%s's config sets %s=%s in %s; the drop-in's %s=%s overrides it because %s reads the drop-in later.", s.name(), name, pin, file, name, value, s.name())
	}
}

// respect records a kept RKE2 setting once.
func (s *state) respect(item string) {
	if !slices.Contains(s.d.Respected, item) {
		s.d.Respected = append(s.d.Respected, item)
	}
}

func evidenceSuffix(configSource string) string {
	if configSource == "" {
		return ""
	}
	return " (per " + configSource + ")"
}
