package facts

import (
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// maxHops bounds a symlink chain like the kernel's ELOOP limit.
const maxHops = 40

func (p *probe) userspace() Userspace {
	u := Userspace{IptablesAlternative: "unknown"}
	for _, cmd := range hostfs.IptablesCommands {
		if !p.root.Exists(cmd) && !p.isLink(cmd) {
			continue
		}
		hops := p.followLinks(cmd)
		u.IptablesPath = hops[len(hops)-1]
		u.IptablesAlternative = classifyIptables(hops)
		break
	}
	if u.IptablesPath == "" {
		p.problem("No iptables command found (looked at %s): the host's iptables flavour is unknown; %s.", strings.Join(hostfs.IptablesCommands, ", "), hostfs.InstallHint("iptables"))
	} else if u.IptablesAlternative == "unknown" {
		p.problem("%s does not say whether it is iptables-legacy or iptables-nft: the host's iptables flavour is unknown.", u.IptablesPath)
	}
	u.LegacyTablesIPv4 = p.tableNames(hostfs.IPTablesNames)
	u.LegacyTablesIPv6 = p.tableNames(hostfs.IP6TablesNames)
	return u
}

func (p *probe) isLink(hostPath string) bool {
	_, err := p.root.Readlink(hostPath)
	return err == nil
}

// followLinks returns hostPath and every symlink target after it, as host
// paths, e.g. /usr/sbin/iptables, /etc/alternatives/iptables,
// /usr/sbin/iptables-nft, /usr/sbin/xtables-nft-multi.
func (p *probe) followLinks(hostPath string) []string {
	hops := []string{hostPath}
	cur := hostPath
	for range maxHops {
		target, err := p.root.Readlink(cur)
		if err != nil {
			break
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(cur), target)
		}
		cur = path.Clean(target)
		hops = append(hops, cur)
	}
	return hops
}

// classifyIptables reads the flavour from the names along the chain, the
// last hop first: xtables-nft-multi / iptables-nft mean nft,
// xtables-legacy-multi / iptables-legacy mean legacy, and iptables 1.6's
// xtables-multi predates nft and is legacy.
func classifyIptables(hops []string) string {
	for i := len(hops) - 1; i >= 0; i-- {
		base := path.Base(hops[i])
		switch {
		case strings.Contains(base, "legacy"):
			return "legacy"
		case strings.Contains(base, "nft"):
			return "nft"
		case base == "xtables-multi":
			return "legacy"
		}
	}
	return "unknown"
}

// tableNames reads a /proc/net/*_tables_names file; a missing file means
// the legacy module is not loaded, so no legacy table exists.
func (p *probe) tableNames(hostPath string) []string {
	names := []string{}
	data, ok := p.read(hostPath, "legacy tables are unknown")
	if !ok {
		return names
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names
}
