package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// ProxyModeIPVS is kube-proxy's --proxy-mode for ipvs. ipvs mode still
// programs iptables (its nat and filter chains, the ipset matches) through
// the image's iptables wrapper, so IPTABLES_MODE matters under it exactly
// as in iptables mode; the tool decides that backend and keeps the mode.
const ProxyModeIPVS = "ipvs"

// underIPVS: the operator's RKE2 config sets proxy-mode=ipvs. The drop-in
// never writes another proxy-mode over it: leaving ipvs strands its ipsets,
// the kube-ipvs0 link and the virtual servers, which RKE2's kube-proxy
// cannot clean (its pod mounts no /lib/modules, so its ipvs cleanup returns
// early), and the moved node answers ARP for every LoadBalancer IP.
func (s *state) underIPVS() bool { return s.pins.proxyMode == ProxyModeIPVS }

// respectIPVS keeps proxy-mode=ipvs and decides the iptables backend under
// it: from IPTABLES_MODE when the operator pinned it and respect_rke2_config
// keeps pins, else through auto, limited to the iptables backends.
func (s *state) respectIPVS() (backend.Backend, bool) {
	p := s.pins
	s.iptablesOnly = true
	s.respect(fmt.Sprintf("proxy-mode=%s in %s", ProxyModeIPVS, p.proxyModeFile))
	if !s.c.RespectRKE2Config {
		s.say("%s's config sets proxy-mode=ipvs in %s. respect_rke2_config is false, but the drop-in never moves a node off ipvs (that strands kube-proxy's ipsets, the kube-ipvs0 link and its virtual servers), so ipvs is kept and auto-detection decides the iptables backend under it.", s.name(), p.proxyModeFile)
		return "", false
	}
	s.dropInvalidIptablesMode()
	p = s.pins
	if p.iptablesMode != "" {
		b := byIptablesMode(p.iptablesMode)
		cp := s.caps[b]
		if cp.support == unsupported && cp.kernel {
			s.refusePin(b, cp.why)
			return "", false
		}
		s.d.Source = SourceRKE2Config
		s.say("%s's config already sets %s, and respect_rke2_config is true, so kube-proxy keeps ipvs mode with %s under it.", s.name(), strings.Join(p.text(), " and "), b)
		if cp.support == unsupported {
			s.say("Warning: %s, so kube-proxy is likely to fail: change IPTABLES_MODE in %s's config, or set respect_rke2_config: false to let auto-detection decide the backend under ipvs.", cp.why, s.name())
		}
		return b, true
	}
	s.say("%s's config sets proxy-mode=ipvs in %s, and respect_rke2_config is true, so kube-proxy keeps ipvs mode. ipvs mode writes its iptables rules through the image's iptables wrapper, so the iptables backend under it (IPTABLES_MODE) is decided as for iptables mode.", s.name(), p.proxyModeFile)
	return "", false
}

// refuseNFTablesUnderIPVS is the refusal of nftables asked for (by who) on
// an ipvs node; "" when the node is not one.
func (s *state) refuseNFTablesUnderIPVS(who string) string {
	if !s.underIPVS() {
		return ""
	}
	return fmt.Sprintf("%s asks for nftables, but %s's config sets proxy-mode=ipvs in %s, and under ipvs only an iptables backend can be chosen (nftables is a proxy mode of its own); to run nftables, migrate off ipvs first (see the ipvs reason below)", who, s.name(), s.pins.proxyModeFile)
}

// ipvsScheduler is the --ipvs-scheduler kube-proxy will run with: the last
// one in the operator's RKE2 config or in the drop-in's own args (from
// kube_proxy.extra_args, which RKE2 reads later), with where it came from.
func (s *state) ipvsScheduler() (sched, from string) {
	sched, from = s.f.RKE2.Config.KubeProxyArg("ipvs-scheduler", ourDropIn(s.f))
	for _, a := range s.d.KubeProxyArgs {
		if name, value, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a), "--"), "="); ok && name == "ipvs-scheduler" {
			sched, from = value, s.configFile()
		}
	}
	return strings.TrimSpace(sched), from
}

// configFile names the operator config for reasons.
func (s *state) configFile() string {
	if s.c.File == "" || s.c.File == ForcedBy {
		return hostfs.ConfigFile
	}
	return s.c.File
}

// finishIPVS adds what ipvs mode needs on top of backend b: its modules
// (the scheduler's included) and the reason saying where ipvs stands in
// the Kubernetes version RKE2 runs and what to migrate to.
func (s *state) finishIPVS(b backend.Backend) {
	sched, from := s.ipvsScheduler()
	mods, err := backend.IPVSModules(sched)
	for _, m := range mods {
		if !slices.Contains(s.d.Modules, m) {
			s.d.Modules = append(s.d.Modules, m)
		}
	}
	s.d.IPVSScheduler = sched
	if s.d.IPVSScheduler == "" {
		s.d.IPVSScheduler = backend.DefaultIPVSScheduler
	}
	switch {
	case err != nil:
		s.say("Warning: %s (ipvs-scheduler in %s): set one of them, or remove it for kube-proxy's default, %s.", err, from, backend.DefaultIPVSScheduler)
	case sched == "":
		s.say("Kube-proxy's ipvs mode needs ip_vs, its scheduler's module (no ipvs-scheduler is set, so kube-proxy's default rr: ip_vs_rr), ip_set with the set types it creates, xt_set, xt_ipvs, nf_conntrack and dummy (for kube-ipvs0), so apply loads them with %s's.", b)
	default:
		s.say("Kube-proxy's ipvs mode needs ip_vs, its scheduler's module (ipvs-scheduler=%s in %s: ip_vs_%s), ip_set with the set types it creates, xt_set, xt_ipvs, nf_conntrack and dummy (for kube-ipvs0), so apply loads them with %s's.", sched, from, sched, b)
	}
	v := kernelView{k: s.f.Kernel, m: s.f.Modules}
	for _, req := range ipvsKernel {
		if c := v.feature(req); c.support == unsupported {
			s.say("Warning: %s, which kube-proxy's ipvs mode needs, so its startup check fails and kube-proxy will not start in ipvs mode: use a kernel with it, or migrate off ipvs.", c.why)
		}
	}
	s.say("%s", ipvsLifecycleReason(s.f, s.migrationTarget(b), s.pins.proxyModeFile))
}

// ipvsKernel is what kube-proxy's ipvs mode cannot run without: IPVS
// itself and ipset (CanUseIPVSProxier asks both before it starts).
var ipvsKernel = []backend.Requirement{
	{Feature: "IPVS", Options: []string{"IP_VS"}, Modules: []string{"ip_vs"}},
	{Feature: "ipset", Options: []string{"IP_SET"}, Modules: []string{"ip_set"}},
}

// migrationTarget is what an ipvs node should move to: nftables where the
// kernel, the CNI, the Kubernetes version and the host nft allow it (what
// auto would weigh for nftables), else the iptables backend it runs now.
func (s *state) migrationTarget(b backend.Backend) string {
	cp := s.caps[backend.NFTables]
	if cp.support != unsupported {
		if why := skewBlocksChoice(s.f); why != "" {
			return fmt.Sprintf("%s (not nftables: %s)", b, why)
		}
		return "nftables (this kernel, the CNI and the Kubernetes version allow it)"
	}
	return fmt.Sprintf("%s, the backend it runs under ipvs now (not nftables: %s)", b, cp.why)
}

// ipvsLifecycleReason says, by the Kubernetes version RKE2 runs, where
// kube-proxy's ipvs mode stands (KEP-5495, lifecycle.txt's ipvs rows),
// what to migrate to, and how. Note while ipvs runs without a warning;
// Warning once kube-proxy deprecates it.
func ipvsLifecycleReason(f facts.Facts, target, file string) string {
	l := kpargs.IPVS()
	v, name := f.RKE2.Kubernetes, f.RKE2.Distribution.Name()
	timeline := fmt.Sprintf("kube-proxy deprecates ipvs mode (KEP-5495): it warns from Kubernetes 1.%d, puts it behind the feature gate KubeProxyIPVS from 1.%d, refuses it from 1.%d unless feature-gates=KubeProxyIPVS=true, and has no ipvs mode from 1.%d",
		l.Deprecated.Minor, l.Gate.Minor, l.Off.Minor, l.Gone.Minor)
	how := fmt.Sprintf("Migrate to %s: remove proxy-mode=ipvs and the ipvs-* kube-proxy-arg items from %s without restarting %[3]s (`rke2-proxy-backend switch --to BACKEND --dry-run` says what each ipvs-* item becomes), then run `rke2-proxy-backend switch --to BACKEND`: it restarts %[3]s and removes what ipvs mode leaves, which RKE2's kube-proxy does not clean (its pod mounts no /lib/modules): the kube-ipvs0 link, kube-proxy's KUBE-* ipsets, and the IPVS virtual servers on kube-ipvs0's addresses (never another owner's, such as keepalived's).", target, file, name)
	switch {
	case !v.Known():
		return fmt.Sprintf("Note: %s; the Kubernetes version %s runs is unknown. %s", timeline, name, how)
	case v.Minor >= l.Gone.Minor:
		return fmt.Sprintf("Warning: %s, and %s runs Kubernetes %s. %s", timeline, name, v, how)
	case v.Minor >= l.Off.Minor:
		return fmt.Sprintf("Warning: %s, and %s runs Kubernetes %s, whose kube-proxy runs ipvs only with feature-gates=KubeProxyIPVS=true. %s", timeline, name, v, how)
	case v.Minor >= l.Deprecated.Minor:
		return fmt.Sprintf("Warning: %s; %s runs Kubernetes %s, whose kube-proxy still runs ipvs but warns. %s", timeline, name, v, how)
	}
	return fmt.Sprintf("Note: %s; %s runs Kubernetes %s, which still runs ipvs without a warning. %s", timeline, name, v, how)
}

// ipvsSwitchRefusal is why switch must not yet move a node whose RKE2
// config still sets proxy-mode=ipvs: the operator's item is the last
// proxy-mode kube-proxy reads (respect_rke2_config keeps it, and the tool
// never edits RKE2's config), so a restart would bring ipvs back and the
// switch would roll back. The operator removes the item, and the switch
// then migrates the node (the plan still says ipvs). "" for other nodes.
func ipvsSwitchRefusal(f facts.Facts, b backend.Backend) string {
	var pin *rke2.Setting
	mode := ""
	for _, a := range f.RKE2.Config.Settings(rke2.KeyKubeProxyArg) {
		name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a.Value), "--"), "=")
		if name == "proxy-mode" && a.File != ourDropIn(f) {
			pin, mode = &a, strings.TrimSpace(value)
		}
	}
	if pin == nil || mode != ProxyModeIPVS {
		return ""
	}
	where := pin.File
	if pin.Line > 0 {
		where += fmt.Sprintf(" line %d", pin.Line)
	}
	return fmt.Sprintf("%s's config sets proxy-mode=ipvs (%s, kube-proxy-arg item %q), the mode kube-proxy would come back in after the restart (rke2-proxy-backend never edits %[1]s's config): remove that item, without restarting %[1]s, then run `rke2-proxy-backend switch --to %[4]s` again; it restarts %[1]s and removes ipvs's leftovers (`--dry-run` says what each ipvs-* setting becomes)", f.RKE2.Distribution.Name(), where, pin.Value, b)
}
