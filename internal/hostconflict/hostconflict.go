// Package hostconflict finds what on the host fights kube-proxy and the
// CNI for netfilter rules or interfaces: firewalld, ufw, nm-cloud-setup,
// NetworkManager, a missing or buggy iptables or nft, kernel modules
// configured but not installed, PREEMPT_RT with legacy xtables (RKE2's
// known issues, DOMAIN.md section 8). Find is pure: facts in, findings out,
// each one line with the command that fixes it.
package hostconflict

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Finding is one host conflict.
type Finding struct {
	// ID names the kind, stable for scripts: firewalld, ufw, ...
	ID string `json:"id"`
	// Text says what is wrong and what it breaks, one sentence.
	Text string `json:"text"`
	// Fix is the command (or edit) that removes the conflict.
	Fix string `json:"fix"`
}

// Line is the finding as detect prints it.
func (f Finding) Line() string { return f.Text + " Fix: " + f.Fix }

// Find judges the facts for a node about to run kube-proxy on b ("" when
// the tool is off: the backend-specific checks are skipped).
func Find(f facts.Facts, b backend.Backend) []Finding {
	var out []Finding
	add := func(id, fix, format string, args ...any) {
		out = append(out, Finding{ID: id, Text: fmt.Sprintf(format, args...), Fix: fix})
	}
	hs := f.HostServices
	if hs.IsEnabled("firewalld.service") {
		flush := "with FlushAllOnReload=" + hs.FirewalldFlushAllOnReload + " in " + facts.FirewalldConf
		if hs.FirewalldFlushAllOnReload == "yes" {
			flush += ", so every `firewall-cmd --reload` wipes kube-proxy's and portmap's rules until they are written again (rke2#10469)"
		} else {
			flush += "; RKE2 still asks for it to be off, since its zones filter pod and service traffic"
		}
		add("firewalld", "systemctl disable --now firewalld", "firewalld is enabled %s.", flush)
	}
	if hs.UfwEnabled {
		add("ufw", "ufw disable && systemctl disable ufw", "ufw is on (ENABLED=yes in %s): its rules sit beside kube-proxy's and drop pod and service traffic RKE2 expects to pass.", facts.UfwConf)
	}
	var nmcs []string
	for _, u := range []string{"nm-cloud-setup.service", "nm-cloud-setup.timer"} {
		if hs.IsEnabled(u) {
			nmcs = append(nmcs, u)
		}
	}
	if len(nmcs) > 0 {
		add("nm-cloud-setup", "systemctl disable "+strings.Join(nmcs, " ")+" && reboot",
			"%s is enabled: it rewrites the routing tables the CNI's pods depend on (an RKE2 known issue).", strings.Join(nmcs, " and "))
	}
	setup := f.RKE2.CNI
	if len(setup.CNIs) == 0 {
		setup = cni.NewSetup(nil, "", nil)
	}
	if hs.IsEnabled("NetworkManager.service") && usesCaliFlannel(setup.Primary) {
		if missing := unmanagedMissing(hs.NMUnmanaged); len(missing) > 0 {
			add("networkmanager", `printf '[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n' > /etc/NetworkManager/conf.d/rke2-canal.conf && systemctl reload NetworkManager`,
				"NetworkManager is enabled and not told to leave %s alone, so it can take over the %s's interfaces and break pod networking.", strings.Join(missing, " and "), setup.Primary)
		}
	}
	if b != "" {
		for _, m := range setup.BackendMismatches(b.ProxyMode(), b.IptablesMode()) {
			add("cni-backend", fmt.Sprintf("set %s: %v in %s (cluster-wide), or pick the backend the CNI runs", m.Key, m.Want, m.File),
				"%s's HelmChartConfig in %s sets %s: %v, so %s writes its rules in another backend than kube-proxy's %s: pods then reach some Services and not others.",
				m.Chart, m.File, m.Key, m.Got, m.What, b)
		}
	}
	if setup.Primary != cni.Cilium && f.Userspace.IptablesPath == "" {
		add("no-iptables", hostfs.InstallHint("iptables"),
			"No iptables command on the host (looked at %s): the portmap CNI plugin runs the host's iptables for every hostPort and fails without it (rke2#3361).", strings.Join(hostfs.IptablesCommands, ", "))
	}
	if v := f.Userspace.Iptables; v.Version != "" && !facts.VersionBelow(v.Version, 1, 8, 0) && facts.VersionBelow(v.Version, 1, 8, 5) {
		add("iptables-1.8.0-1.8.4", "upgrade iptables to 1.8.5 or later",
			"The host's iptables is %s (per %s): 1.8.0 to 1.8.4 add duplicate rules on every resync (k3s#3117).", v.Version, v.Source)
	}
	if b == backend.NFTables {
		if v := f.Userspace.Nft; v.Version != "" && facts.VersionBelow(v.Version, 1, 0, 1) {
			add("nft-too-old", "upgrade nftables to 1.0.1 or later, or run an iptables backend",
				"The host's nft is %s (per %s), older than 1.0.1, and crashes on kube-proxy's nftables rules (kubernetes#122743).", v.Version, v.Source)
		}
	}
	if b == backend.IptablesLegacy && f.Kernel.Config["PREEMPT_RT"] == facts.Builtin {
		add("preempt-rt-legacy", "set backend: iptables-nft in /etc/rke2-proxy-backend/config.yaml, or boot a kernel without PREEMPT_RT",
			"Kernel %s is a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y in %s), which cannot have legacy xtables, but the backend is iptables-legacy (raspberrypi/linux#7213).", f.Kernel.Release, f.Kernel.ConfigSource)
	}
	if missing := modulesMissing(f, b); len(missing) > 0 {
		add("modules-missing", modulesPackageFix(f.Kernel.Release),
			"Kernel %s is configured to build %s as modules (=m in %s), but their files are not installed, so %s cannot load its rules (rke2#8498).",
			f.Kernel.Release, strings.Join(missing, ", "), f.Kernel.ConfigSource, b)
	}
	return out
}

// usesCaliFlannel reports whether the CNI creates cali* or flannel* links.
func usesCaliFlannel(primary string) bool {
	return primary == cni.Canal || primary == cni.Calico || primary == cni.Flannel || primary == cni.K3sFlannel
}

// unmanagedMissing returns the CNI interface patterns NetworkManager's
// unmanaged-devices does not cover.
func unmanagedMissing(patterns []string) []string {
	var missing []string
	for _, probe := range []struct{ want, example string }{{"cali*", "cali1a2b3c4d5e6"}, {"flannel*", "flannel.1"}} {
		covered := slices.ContainsFunc(patterns, func(p string) bool {
			ok, err := path.Match(p, probe.example)
			return err == nil && ok
		})
		if !covered {
			missing = append(missing, probe.want)
		}
	}
	return missing
}
