package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// KindUndispatched: a chain kube-proxy programmed for a Service (nftables
// mode) is no longer reached by any dispatch map element or jump, so that
// Service's traffic is not dispatched on this node.
const KindUndispatched = "undispatched-service"

// dispatchMaps are kube-proxy's verdict maps whose elements send traffic
// to a Service's chains: service-ips (ClusterIPs, external IPs and
// LoadBalancer IPs), service-nodeports, and firewall-ips (LoadBalancer
// source ranges). The no-endpoint maps' verdicts go to fixed chains only.
var dispatchMaps = []string{"service-ips", "service-nodeports", "firewall-ips"}

func isDispatchMap(name string) bool { return slices.Contains(dispatchMaps, name) }

// endpointChainPrefix starts the name of kube-proxy's per-endpoint chains.
const endpointChainPrefix = "endpoint-"

// undispatched finds, in each of live's nftables kube-proxy tables, the
// Service chains (service-, local-, external-, firewall-) that hold rules
// but that nothing reaches: kube-proxy's own chains are reached from its
// base chains, and a Service's chains from the elements of its maps and
// from each other's jumps (external- goes to service- or local-). The walk
// starts at every fixed chain, whether a base chain jumps to it or not (a
// missing base-chain jump is the skeleton's finding, not this one's), and
// at every map element read (Set.Jumps in verify's read). A chain with
// no rules is one kube-proxy flushed as stale and deletes a second later:
// nothing to dispatch, no finding. endpoint- chains are not judged: before 1.36 only the anonymous
// numgen vmap of their service chain reaches them, whose elements verify
// does not read (and no command deletes one of them alone).
func (g group) undispatched(live *rules.Ruleset) []Finding {
	if live == nil || live.Backend != backend.NFTables {
		return nil
	}
	var out []Finding
	for _, t := range live.Tables {
		if t.Name != vocab.NFTablesTable {
			continue
		}
		lost := unreachedServiceChains(t)
		if len(lost) == 0 {
			continue
		}
		services := make([]string, len(lost))
		for i, c := range lost {
			services[i] = c + " (" + serviceOfChain(c) + ")"
		}
		out = append(out, Finding{Kind: KindUndispatched, Backend: live.Backend, Family: t.Family, Table: t.Name,
			Message: fmt.Sprintf("%s %s table %s: %d Service chain(s) with rules that no element of %s and no jump reaches: %s; the traffic those chains would carry for these Services is not dispatched on this node",
				live.Backend, t.Family, t.Name, len(lost), strings.Join(dispatchMaps, ", "), clipList(services, 4)),
			Fix: "restart kube-proxy so its full resync writes the missing elements again (it also resyncs fully about once an hour): " + g.restart()})
	}
	return out
}

// unreachedServiceChains are t's Service chains with rules that no fixed
// chain, map element or reached chain jumps to, sorted. Chains are found
// by an index, not Table.Chain: a large table has tens of thousands.
func unreachedServiceChains(t rules.Table) []string {
	index := make(map[string]int, len(t.Chains))
	for i, c := range t.Chains {
		index[c.Name] = i
	}
	reached := make([]bool, len(t.Chains))
	var todo []int
	reach := func(name string) {
		// A jump to a chain that is gone fails in the kernel, not here.
		if i, ok := index[name]; ok && !reached[i] {
			reached[i] = true
			todo = append(todo, i)
		}
	}
	for _, c := range t.Chains {
		if !vocab.IsNFTablesPerServiceChain(c.Name) {
			reach(c.Name)
		}
	}
	for _, s := range t.Sets {
		for _, e := range s.Elements {
			reach(rules.ElementJump(e))
		}
		for _, j := range s.Jumps {
			reach(j)
		}
	}
	for len(todo) > 0 {
		c := t.Chains[todo[len(todo)-1]]
		todo = todo[:len(todo)-1]
		for _, r := range c.Rules {
			reach(r.Jump)
		}
	}
	var out []string
	for i, c := range t.Chains {
		if len(c.Rules) > 0 && !reached[i] && vocab.IsNFTablesPerServiceChain(c.Name) && !strings.HasPrefix(c.Name, endpointChainPrefix) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

// serviceOfChain names the Service port a per-Service chain belongs to,
// from kube-proxy's name "PREFIX-HASH-namespace/name/protocol/port", with
// "__IP/PORT" after it for an endpoint chain.
func serviceOfChain(chain string) string {
	_, rest, _ := strings.Cut(chain, "-")
	_, rest, _ = strings.Cut(rest, "-")
	base, endpoint, isEndpoint := strings.Cut(rest, "__")
	parts := strings.Split(base, "/")
	if len(parts) != 4 {
		return "Service " + rest
	}
	s := fmt.Sprintf("Service %s/%s port %s/%s", parts[0], parts[1], parts[3], parts[2])
	if isEndpoint {
		s += ", endpoint " + endpoint
	}
	return s
}
