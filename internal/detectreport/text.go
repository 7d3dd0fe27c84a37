package detectreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Write prints the report as detect does: one JSON document with asJSON,
// else the text an operator reads.
func (r Report) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}

// WriteText writes the short human view: the decision, numbered reasons,
// what was refused or kept, then the handful of facts the reasons lean on.
func (r Report) WriteText(w io.Writer) error {
	f, c, d := r.Facts, r.Config, r.Decision
	var b strings.Builder
	if d.Disabled {
		fmt.Fprintf(&b, "backend: none, rke2-proxy-backend leaves kube-proxy alone (source: %s)\n", d.Source)
	} else {
		fmt.Fprintf(&b, "backend: %s (source: %s)\n", d.Backend, d.Source)
		fmt.Fprintf(&b, "proxy mode: %s\n", proxyModeText(f, d))
		settings := append(append([]string{}, d.KubeProxyArgs...), d.KubeProxyEnv...)
		if len(settings) == 0 {
			settings = []string{"nothing to add"}
		}
		fmt.Fprintf(&b, "kube-proxy: %s\n", strings.Join(settings, " "))
	}
	b.WriteString("\nreasons:\n")
	for i, reason := range d.Reasons {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, reason)
	}
	list(&b, "refused", d.Refused)
	list(&b, "kept from "+settingsOf(f), d.Respected)
	b.WriteString("\nfacts:\n")
	fact(&b, "kernel", kernelText(f.Kernel))
	fact(&b, "iptables", OrUnknown(f.Userspace.IptablesAlternative)+pathSuffix(f.Userspace.IptablesPath))
	fact(&b, "legacy tables", legacyText(f.Userspace))
	fact(&b, "live rules", liveText(f.LiveRules))
	if f.LiveRules.Probed {
		fact(&b, "ipvs state", ipvsStateText(f.LiveRules.IPVS, d.ProxyMode))
	}
	if s := costText(f); s != "" {
		fact(&b, "cost", s)
	}
	fact(&b, distLabel(f), rke2Text(f.RKE2))
	fact(&b, "cni", cniText(f.RKE2.CNI))
	configText := "defaults (no " + hostfs.ConfigFile + ")"
	if c.File != "" {
		configText = c.File
	}
	fact(&b, "config", configText)
	r.writeHost(&b)
	list(&b, "an image cannot tell", f.NotInImage)
	if c := r.Certified; c != nil && c.Notice != "" {
		list(&b, "certified image", []string{c.Notice})
	}
	list(&b, "problems", f.Problems)
	list(&b, "unreadable", f.Unreadable)
	_, err := io.WriteString(w, b.String())
	return err
}

// proxyModeText is kube-proxy's mode; under ipvs the backend line names
// the iptables backend beneath it, so the mode line says so.
func proxyModeText(f facts.Facts, d decide.Decision) string {
	if d.ProxyMode == decide.ProxyModeIPVS {
		return fmt.Sprintf("ipvs (kept from %s; %s under it, scheduler %s)", settingsOf(f), d.Backend, d.IPVSScheduler)
	}
	return OrUnknown(d.ProxyMode)
}

func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
}

func fact(b *strings.Builder, name, value string) {
	fmt.Fprintf(b, "  %-14s %s\n", name+":", value)
}

func kernelText(k facts.Kernel) string {
	s := OrUnknown(k.Release)
	if k.ReleaseSource != "" {
		s += " (" + k.ReleaseSource + ")"
	}
	if k.ConfigSource != "" {
		return s + ", config " + k.ConfigSource
	}
	return s + ", no kernel config found"
}

func legacyText(u facts.Userspace) string {
	if len(u.LegacyTablesIPv4)+len(u.LegacyTablesIPv6) == 0 {
		return "none"
	}
	return fmt.Sprintf("ipv4 %s; ipv6 %s", orNone(u.LegacyTablesIPv4), orNone(u.LegacyTablesIPv6))
}

func liveText(l facts.LiveRules) string {
	if !l.Probed {
		return "not probed"
	}
	s := "kube-proxy in " + orNone(l.KubeProxy) + "; kubelet hint in " + orNone(l.KubeletHint)
	if l.NFTablesNotLoaded != "" {
		s += "; no nftables rules (" + l.NFTablesNotLoaded + ")"
	}
	return s
}

// ipvsStateText is kube-proxy's ipvs state; outside ipvs mode any of it is
// a leftover (verify fails on it), said with the command that shows the fix.
func ipvsStateText(state []string, mode string) string {
	if len(state) == 0 {
		return "none"
	}
	s := strings.Join(state, ", ")
	if mode == decide.ProxyModeIPVS {
		return s
	}
	return s + " (leftovers: kube-proxy is not in ipvs mode; `rke2-proxy-backend cleanup --ipvs-leftovers --dry-run` shows what the sweep removes)"
}

func rke2Text(r facts.RKE2) string {
	if r.Version == "" && len(r.Units) == 0 {
		return "not installed"
	}
	s := OrUnknown(r.Version)
	if r.VersionSource != "" {
		s += " (from " + r.VersionSource + ")"
	}
	if r.ConfigFile != "" {
		s += ", config " + r.ConfigFile
	}
	return s
}

// OrUnknown is s, or "unknown" for an unknown (empty) value.
func OrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

func pathSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " (" + p + ")"
}

// settingsOf names where kept settings come from: RKE2's config, or on
// k3s its config and its unit's environment (IPTABLES_MODE lives there).
func settingsOf(f facts.Facts) string {
	if p := f.RKE2.Distribution.Profile(); p.KubeProxyEmbedded {
		return p.Name + "'s config and unit"
	}
	return f.RKE2.Distribution.Name() + "'s config"
}

// distLabel is the facts line naming the distribution's install.
func distLabel(f facts.Facts) string { return string(f.RKE2.Distribution.Profile().Kind) }
