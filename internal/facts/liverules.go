package facts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/nftables"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// kubeProxyChains are chains only kube-proxy's iptables mode creates
// (DOMAIN.md section 4). KUBE-FIREWALL is left out: kubelet creates it too.
var kubeProxyChains = map[string]bool{
	"KUBE-SERVICES": true, "KUBE-EXTERNAL-SERVICES": true, "KUBE-FORWARD": true,
	"KUBE-NODEPORTS": true, "KUBE-PROXY-FIREWALL": true, "KUBE-PROXY-CANARY": true,
	"KUBE-POSTROUTING": true, "KUBE-MARK-MASQ": true,
}

// kubeProxyChainPrefixes are kube-proxy's per-service chains.
var kubeProxyChainPrefixes = []string{"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-"}

// kubeletChains are the chains kubelet writes with the host's iptables.
var kubeletChains = map[string]bool{"KUBE-IPTABLES-HINT": true, "KUBE-KUBELET-CANARY": true}

// iptablesTables are the tables iptables-nft creates in nf_tables.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true}

// classifyChains says whether chain names show kube-proxy's and kubelet's rules.
func classifyChains(names []string) (kubeProxy, kubelet bool) {
	for _, n := range names {
		if kubeletChains[n] {
			kubelet = true
		}
		if kubeProxyChains[n] {
			kubeProxy = true
		}
		for _, p := range kubeProxyChainPrefixes {
			if strings.HasPrefix(n, p) {
				kubeProxy = true
			}
		}
	}
	return kubeProxy, kubelet
}

// liveRules reads where kube rules live now. It only runs on the real host
// root: under --root the files describe another host than the kernel.
func (p *probe) liveRules(opts Options) LiveRules {
	lr := LiveRules{KubeProxy: []string{}, KubeletHint: []string{}}
	if !opts.LiveRules {
		return lr
	}
	if !p.root.IsHost() {
		p.problem("Live rules were not read: under --root %s the running kernel belongs to another host.", p.root.Dir())
		return lr
	}
	proxy, hint := map[backend.Backend]bool{}, map[backend.Backend]bool{}
	if err := scanNFTables(proxy, hint); err != nil {
		p.problem("Live nftables rules could not be read (%s): whether kube rules already run on iptables-nft or nftables is unknown.", err)
		return lr
	}
	if err := scanLegacy(p.f.Userspace.LegacyTablesIPv4, p.f.Userspace.LegacyTablesIPv6, proxy, hint); err != nil {
		p.problem("Live iptables-legacy rules could not be read (%s): whether kube rules already run on iptables-legacy is unknown.", err)
		return lr
	}
	lr.Probed = true
	lr.KubeProxy = backendNames(proxy)
	lr.KubeletHint = backendNames(hint)
	return lr
}

// scanNFTables reads every nf_tables table and chain over one netlink
// connection: table ip/ip6 kube-proxy is native nftables mode; KUBE-*
// chains in ip/ip6 filter, nat or mangle were written by iptables-nft.
func scanNFTables(proxy, hint map[backend.Backend]bool) error {
	conn, err := nftables.New(nftables.AsLasting())
	if err != nil {
		return fmt.Errorf("open netlink: %w", err)
	}
	defer conn.CloseLasting()
	tables, err := conn.ListTables()
	if err != nil {
		return fmt.Errorf("list nftables tables: %w", err)
	}
	for _, t := range tables {
		if isIPFamily(t.Family) && t.Name == "kube-proxy" {
			proxy[backend.NFTables] = true
		}
	}
	chains, err := conn.ListChains()
	if err != nil {
		return fmt.Errorf("list nftables chains: %w", err)
	}
	var names []string
	for _, c := range chains {
		if c.Table != nil && isIPFamily(c.Table.Family) && iptablesTables[c.Table.Name] {
			names = append(names, c.Name)
		}
	}
	kp, kl := classifyChains(names)
	proxy[backend.IptablesNFT] = proxy[backend.IptablesNFT] || kp
	hint[backend.IptablesNFT] = hint[backend.IptablesNFT] || kl
	return nil
}

func isIPFamily(f nftables.TableFamily) bool {
	return f == nftables.TableFamilyIPv4 || f == nftables.TableFamilyIPv6
}

// scanLegacy reads the user chains of the legacy tables that exist already
// (only those: asking the kernel about any other table creates it).
func scanLegacy(v4, v6 []string, proxy, hint map[backend.Backend]bool) error {
	for _, fam := range []struct {
		ipv6   bool
		tables []string
	}{{false, v4}, {true, v6}} {
		for _, table := range fam.tables {
			if !iptablesTables[table] {
				continue // raw, security: kube-proxy and kubelet write none
			}
			chains, err := legacyChains(table, fam.ipv6)
			if err != nil {
				return err
			}
			kp, kl := classifyChains(chains)
			proxy[backend.IptablesLegacy] = proxy[backend.IptablesLegacy] || kp
			hint[backend.IptablesLegacy] = hint[backend.IptablesLegacy] || kl
		}
	}
	return nil
}

func backendNames(set map[backend.Backend]bool) []string {
	names := []string{}
	for b, on := range set {
		if on {
			names = append(names, string(b))
		}
	}
	sort.Strings(names)
	return names
}
