package facts

import (
	"fmt"
	"sort"

	"github.com/google/nftables"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
)

// iptablesTables are the tables iptables-nft creates in nf_tables.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true}

// classifyChains says whether chain names show kube-proxy's and kubelet's
// rules, by the same ownership verify and cleanup use.
func classifyChains(names []string) (kubeProxy, kubelet bool) {
	for _, n := range names {
		kubeProxy = kubeProxy || ownership.Of("", n) == ownership.KubeProxy
		kubelet = kubelet || ownership.IsKubeletHintChain(n)
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
