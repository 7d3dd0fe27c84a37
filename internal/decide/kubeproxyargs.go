package decide

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// KubeProxyFindings are the kube-proxy-arg items in the operator's own RKE2
// config that the Kubernetes version RKE2 runs refuses or ignores, judged
// with the kube-proxy args d's drop-in adds after them (the last
// proxy-mode wins). Our drop-in's current items are left out: apply
// rewrites it. Nothing is judged when d writes nothing because RKE2 runs
// no kube-proxy or the operator turned the tool off.
func KubeProxyFindings(f facts.Facts, c config.Config, d Decision) []kpargs.Finding {
	if c.Backend == config.Off {
		return nil
	}
	if off, _ := f.RKE2.Config.DisableKubeProxy(); off {
		return nil
	}
	ours := ourDropIn(f)
	var args []rke2.Setting
	for _, s := range f.RKE2.Config.Settings(rke2.KeyKubeProxyArg) {
		if s.File != ours {
			args = append(args, s)
		}
	}
	if !d.Disabled {
		for _, a := range d.KubeProxyArgs {
			args = append(args, rke2.Setting{Value: a, File: ours})
		}
	}
	var out []kpargs.Finding
	for _, fd := range kpargs.Check(f.RKE2.Kubernetes, args) {
		if fd.File != ours {
			out = append(out, fd)
		}
	}
	return out
}

// KubeProxyRefusals are the KubeProxyFindings that stop kube-proxy: what
// apply weighs by on_failure and switch refuses to restart into.
func KubeProxyRefusals(f facts.Facts, c config.Config, d Decision) []kpargs.Finding {
	return kpargs.Refusing(KubeProxyFindings(f, c, d))
}

func ourDropIn(f facts.Facts) string {
	main := f.RKE2.ConfigFile
	if main == "" {
		main = hostfs.RKE2ConfigFile
	}
	return rke2.DropInPath(main)
}

// sayKubeProxyFindings adds one reason per finding in RKE2's config.
func (s *state) sayKubeProxyFindings() {
	for _, fd := range KubeProxyFindings(s.f, s.c, *s.d) {
		prefix := "Warning: "
		if fd.Severity == kpargs.Ignored {
			prefix = "Note: "
		}
		s.say("%s%s", prefix, fd.String())
	}
}

// extraArgs returns kube_proxy.extra_args without what the Kubernetes
// version RKE2 runs refuses or ignores: the drop-in is ours, so a setting
// that would stop kube-proxy is not written (a gate pair is taken out of
// its item, the other pairs kept), and each drop is said.
func (s *state) extraArgs(mode string) []string {
	var out []string
	file := s.c.File
	if file == "" || file == ForcedBy {
		file = hostfs.ConfigFile
	}
	for _, extra := range s.c.KubeProxy.ExtraArgs {
		// An ipvs-* flag does nothing outside ipvs mode, and kube-proxy
		// drops it with ipvs: a node migrated off ipvs keeps none of ours.
		if name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(extra), "--"), "="); strings.HasPrefix(name, "ipvs-") && mode != ProxyModeIPVS {
			s.say("kube_proxy.extra_args in %s has %q, which applies only to ipvs mode, and kube-proxy runs %s mode, so the drop-in leaves it out.", file, extra, mode)
			continue
		}
		args := []rke2.Setting{{Value: "proxy-mode=" + mode}, {Value: extra, File: file}}
		var dropped []kpargs.Finding
		for _, fd := range kpargs.Check(s.f.RKE2.Kubernetes, args) {
			if fd.File == file {
				dropped = append(dropped, fd)
			}
		}
		if len(dropped) == 0 {
			out = append(out, extra)
			continue
		}
		kept := withoutGates(extra, dropped)
		for _, fd := range dropped {
			s.say("kube_proxy.extra_args in %s has %q, but %s, so the drop-in leaves %q out.", file, extra, fd.Why, fd.Remove)
		}
		if kept != "" {
			out = append(out, kept)
		}
	}
	return out
}

// withoutGates is a feature-gates item without the dropped pairs, "" when
// nothing is left (or the whole item is dropped).
func withoutGates(item string, dropped []kpargs.Finding) string {
	name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(item), "--"), "=")
	if name != "feature-gates" {
		return ""
	}
	gates, err := kpargs.ParseGates(value)
	if err != nil {
		return ""
	}
	var kept []kpargs.Gate
	for _, g := range gates {
		drop := false
		for _, fd := range dropped {
			drop = drop || fd.Remove == g.Text || fd.Remove == item
		}
		if !drop {
			kept = append(kept, g)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return fmt.Sprintf("feature-gates=%s", kpargs.FormatGates(kept))
}

// switchKubeProxyRefusal is why a switch to b must not restart RKE2: the
// operator's RKE2 config holds a kube-proxy argument the version RKE2 runs
// refuses, so kube-proxy would not come back on any backend.
func switchKubeProxyRefusal(f facts.Facts, b backend.Backend) string {
	d := Decision{Backend: b, KubeProxyArgs: []string{"proxy-mode=" + b.ProxyMode()}}
	refusals := KubeProxyRefusals(f, config.Config{}, d)
	if len(refusals) == 0 {
		return ""
	}
	texts := make([]string, len(refusals))
	for i, fd := range refusals {
		texts[i] = fd.String()
	}
	return f.RKE2.Distribution.Name() + " is not restarted, because its kube-proxy would not start again: " + strings.Join(texts, " ") + " Then switch again."
}
