// Package live reads where kube rules run in the kernel right now (nftables
// and iptables-legacy chains, kube-proxy's ipvs state, the sets with user
// data) for the facts: detect's and verify's live view. It is a package of
// its own so that the probe's other callers, the generator first, link no
// netfilter reader: facts.Probe calls it only through Options.Live.
package live

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/legacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// iptablesTables are the tables iptables-nft creates in nf_tables.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true}

// classifyChains says whether the chain names of an iptables table (of
// iptables-legacy or iptables-nft) show kube-proxy's rules and kubelet's
// hint chains, by the same ownership and hint rule verify and cleanup use.
func classifyChains(legacy bool, table string, names []string) (kubeProxy, kubelet bool) {
	for _, n := range names {
		kubeProxy = kubeProxy || ownership.Of("", n) == ownership.KubeProxy
		kubelet = kubelet || vocab.IsKubeletHint(legacy, table, n)
	}
	return kubeProxy, kubelet
}

// Read is a facts.LiveReader: the running kernel's rules, with a sentence
// per source that could not be read. The probe calls it on the real host
// root only; legacyV4 and legacyV6 are the legacy tables that exist.
func Read(legacyV4, legacyV6 []string) (facts.LiveRules, []string) {
	lr := facts.LiveRules{KubeProxy: []string{}, KubeletHint: []string{}}
	var problems []string
	proxy, hint := map[backend.Backend]bool{}, map[backend.Backend]bool{}
	lr.NFTablesNotLoaded = netfilter.NFTablesAbsent(hostfs.New("/"))
	if err := scanNFTables(context.Background(), proxy, hint); err != nil {
		return lr, append(problems, fmt.Sprintf("Live nftables rules could not be read (%s): whether kube rules already run on iptables-nft or nftables is unknown.", err))
	}
	if err := scanLegacy(legacyV4, legacyV6, proxy, hint); err != nil {
		return lr, append(problems, fmt.Sprintf("Live iptables-legacy rules could not be read (%s): whether kube rules already run on iptables-legacy is unknown.", err))
	}
	lr.Probed = true
	if sets, err := ForeignUserdataSets(context.Background()); err != nil {
		problems = append(problems, fmt.Sprintf("Sets with user data could not be listed (%s): whether kube-proxy's image nft meets sets it may crash on is unknown.", err))
	} else {
		lr.UserdataSets, lr.UserdataSetsRead = sets, true
	}
	fp := ipvs.ReadFootprint()
	for _, err := range []error{fp.SetsErr, fp.LinkErr, fp.ServicesErr} {
		if err != nil {
			problems = append(problems, fmt.Sprintf("Part of kube-proxy's ipvs state could not be read (%s): ipvs leftovers may be missing from this report.", err))
		}
	}
	lr.IPVS = ipvsStateOf(fp)
	lr.KubeProxy = backendNames(proxy)
	lr.KubeletHint = backendNames(hint)
	return lr, problems
}

// scanNFTables reads every ip/ip6 nftables table and chain name (one table
// and one chain dump, netfilter.NFTChains; none, without asking, while
// nf_tables is not loaded): table kube-proxy is native nftables mode;
// KUBE-* chains in filter, nat or mangle were written by iptables-nft.
func scanNFTables(ctx context.Context, proxy, hint map[backend.Backend]bool) error {
	tables, err := netfilter.NFTChains(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if t.Name == vocab.NFTablesTable {
			proxy[backend.NFTables] = true
		}
		if !iptablesTables[t.Name] {
			continue
		}
		var names []string
		for _, c := range t.Chains {
			names = append(names, c.Name)
		}
		kp, kl := classifyChains(false, t.Name, names)
		proxy[backend.IptablesNFT] = proxy[backend.IptablesNFT] || kp
		hint[backend.IptablesNFT] = hint[backend.IptablesNFT] || kl
	}
	return nil
}

// scanLegacy reads the user chains of the legacy tables that exist already
// (only those: asking the kernel about any other table creates it).
func scanLegacy(v4, v6 []string, proxy, hint map[backend.Backend]bool) error {
	for _, fam := range []struct {
		family rules.Family
		tables []string
	}{{rules.IPv4, v4}, {rules.IPv6, v6}} {
		// raw, security: kube-proxy and kubelet write none
		chains, err := legacy.ChainNames(fam.family, slices.DeleteFunc(slices.Clone(fam.tables), func(t string) bool { return !iptablesTables[t] }))
		if err != nil {
			return err
		}
		for table, names := range chains {
			kp, kl := classifyChains(true, table, names)
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
