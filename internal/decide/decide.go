package decide

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// NodeLabelKey is the node label that shows each node's backend.
const NodeLabelKey = vocab.NodeLabelPlanned

// Decide picks the backend kube-proxy must use. The order, first match wins:
//  1. backend: off, or RKE2 running no kube-proxy: nothing to do;
//  2. an operator override (cmdline, env, config) the host can run;
//  3. with respect_rke2_config, what RKE2's own config already pins;
//  4. auto: this boot's plan, live rules, legacy triggers, nftables if
//     prefer lists it first, what the kernel can run, the host's iptables
//     alternative, then prefer.
//
// It is pure: same facts and config, same decision, reasons included.
func Decide(f facts.Facts, c config.Config) Decision {
	s := &state{f: f, c: c, caps: assess(f), pins: readPins(f), d: &Decision{
		Modules: []string{}, KubeProxyArgs: []string{}, KubeProxyEnv: []string{}, Reasons: []string{},
	}}
	switch {
	case c.Backend == config.Off:
		s.d.Disabled, s.d.Source = true, c.BackendSource
		s.say("The setting %s turns rke2-proxy-backend off, so it writes nothing and %s runs kube-proxy with its own defaults.", c.BackendSetting(), f.RKE2.Distribution.Name())
		return *s.d
	case s.pins.disabled:
		s.d.Disabled, s.d.Source = true, SourceRKE2Config
		s.d.Respected = []string{"disable-kube-proxy=true in " + s.pins.disabledFile}
		s.say("%s's config sets disable-kube-proxy: true (in %s), so this node runs no kube-proxy and there is nothing to do.", f.RKE2.Distribution.Name(), s.pins.disabledFile)
		return *s.d
	}
	b, ok := s.override()
	if !ok {
		b, ok = s.respectRKE2()
		if s.d.Disabled {
			s.sayKubeProxyFindings() // e.g. proxy-mode=ipvs where kube-proxy refuses it
			return *s.d
		}
	}
	if !ok {
		b = s.auto()
	}
	s.finish(b)
	s.sayKubeProxyFindings()
	return *s.d
}

// state carries one decision in the making.
type state struct {
	f    facts.Facts
	c    config.Config
	caps map[backend.Backend]capability
	pins pins
	d    *Decision
	// iptablesOnly is set when RKE2's config pins proxy-mode=iptables and
	// only the iptables backend (legacy or nft) is ours to choose.
	iptablesOnly bool
}

// name is the node's distribution in the reasons' words.
func (s *state) name() string { return s.f.RKE2.Distribution.Name() }

// say appends one reason, a plain sentence.
func (s *state) say(format string, args ...any) {
	s.d.Reasons = append(s.d.Reasons, fmt.Sprintf(format, args...))
}

// capital starts a sentence with a clause such as capability.why.
func capital(clause string) string {
	if clause == "" {
		return clause
	}
	return strings.ToUpper(clause[:1]) + clause[1:]
}

// override honours an explicit backend unless the host cannot run it.
func (s *state) override() (backend.Backend, bool) {
	if s.c.Backend == config.Auto || s.c.Backend == "" {
		return "", false
	}
	b := backend.Backend(s.c.Backend)
	who := s.c.BackendSetting()
	if b == backend.NFTables {
		if why := s.refuseNFTablesUnderIPVS("The override " + who); why != "" {
			s.d.Refused = append(s.d.Refused, why)
			s.say("%s, so it is refused and the backend under ipvs is decided instead.", why)
			return "", false
		}
	}
	if cp := s.caps[b]; cp.support == unsupported {
		s.d.Refused = append(s.d.Refused, fmt.Sprintf("%s: %s", who, cp.why))
		s.say("The override %s asks for %s, but %s, so it is refused and auto-detection decides instead.", who, b, cp.why)
		return "", false
	}
	s.d.Source = s.c.BackendSource
	if s.underIPVS() {
		s.iptablesOnly = true
		s.say("The override %s sets the iptables backend under ipvs mode (%s's config sets proxy-mode=ipvs in %s, which is kept) to %s.", who, s.name(), s.pins.proxyModeFile, b)
		return b, true
	}
	s.say("The override %s sets the backend to %s.", who, b)
	return b, true
}

// respectRKE2 keeps what the operator pinned in RKE2's config.
func (s *state) respectRKE2() (backend.Backend, bool) {
	p := s.pins
	if !p.any() {
		return "", false
	}
	if s.underIPVS() {
		return s.respectIPVS()
	}
	if p.k3sEnv != nil {
		s.dropInvalidIptablesMode()
		if b, ok, handled := s.respectK3sEnv(); handled {
			return b, ok
		}
		if p = s.pins; !p.any() {
			return "", false
		}
	}
	if !s.c.RespectRKE2Config {
		s.say("%s's config sets %s, but respect_rke2_config is false, so auto-detection decides and the drop-in overrides it.", s.name(), strings.Join(p.text(), " and "))
		return "", false
	}
	s.dropInvalidIptablesMode()
	p = s.pins
	var b backend.Backend
	switch p.proxyMode {
	case "":
		if p.iptablesMode == "" {
			return "", false
		}
		b = byIptablesMode(p.iptablesMode)
	case "iptables":
		if p.iptablesMode == "" {
			s.iptablesOnly = true
			s.d.Respected = p.text()
			s.say("%s's config sets proxy-mode=iptables in %s, and respect_rke2_config is true, so only the iptables backends are considered.", s.name(), p.proxyModeFile)
			return "", false
		}
		b = byIptablesMode(p.iptablesMode)
	case "nftables":
		b = backend.NFTables
	default:
		s.d.Disabled, s.d.Source = true, SourceRKE2Config
		s.d.Respected = p.text()
		s.say("%s's config sets proxy-mode=%s in %s, a mode rke2-proxy-backend does not manage (it handles iptables, nftables and ipvs), so it leaves kube-proxy alone.", s.name(), p.proxyMode, p.proxyModeFile)
		return "", false
	}
	cp := s.caps[b]
	if cp.support == unsupported && cp.kernel {
		s.refusePin(b, cp.why)
		return "", false
	}
	s.d.Source = SourceRKE2Config
	s.say("%s's config already sets %s, and respect_rke2_config is true, so %s is kept.", s.name(), strings.Join(p.text(), " and "), b)
	if cp.support == unsupported {
		s.say("Warning: %s, so kube-proxy is likely to fail: change %s's config, or set respect_rke2_config: false to let auto-detection decide.", cp.why, s.name())
	}
	return b, true
}

// refusePin refuses what the operator pinned in RKE2's config (backend b)
// when the kernel cannot run it (CONTRACT point 2), as an override is
// refused: auto decides instead, and the drop-in, which RKE2 reads later,
// sets its choice over the pin. A proxy-mode=iptables pin stays: only the
// iptables variant was refused.
func (s *state) refusePin(b backend.Backend, why string) {
	pinned := strings.Join(s.pins.text(), " and ")
	s.d.Refused = append(s.d.Refused, fmt.Sprintf("%s: %s", pinned, why))
	s.say("%s's config sets %s, which asks for %s, but %s, so it is refused and auto-detection decides instead (the drop-in, which RKE2 reads later, overrides it).", s.name(), pinned, b, why)
	if b == backend.NFTables {
		s.pins.proxyMode, s.pins.proxyModeFile = "", ""
		return
	}
	s.pins.iptablesMode, s.pins.iptablesModeFile = "", ""
	if s.pins.proxyMode == "iptables" || s.underIPVS() {
		s.iptablesOnly = true
	}
}

// dropInvalidIptablesMode forgets a pinned IPTABLES_MODE the image cannot
// run, so the drop-in writes a working one over it.
func (s *state) dropInvalidIptablesMode() {
	p := s.pins
	if p.iptablesMode != "" && p.iptablesMode != "legacy" && p.iptablesMode != "nft" {
		if p.k3sEnv != nil {
			s.say("%s", invalidK3sEnv(p.k3sEnv))
			s.pins.iptablesMode, s.pins.iptablesModeFile, s.pins.k3sEnv = "", "", nil
			return
		}
		s.say("%s's config sets IPTABLES_MODE=%s in %s, which RKE2's kube-proxy image does not accept (only legacy and nft work; anything else makes every iptables call in kube-proxy fail), so it is not kept and the drop-in sets a working value.", s.name(), p.iptablesMode, p.iptablesModeFile)
		s.pins.iptablesMode, s.pins.iptablesModeFile = "", ""
	}
}

func byIptablesMode(mode string) backend.Backend {
	if mode == "legacy" {
		return backend.IptablesLegacy
	}
	return backend.IptablesNFT
}
