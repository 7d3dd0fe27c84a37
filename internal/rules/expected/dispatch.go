package expected

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Dispatch is a rule outside the base chains that steers Service traffic
// to the per-service rules: without it every base-chain jump is present
// and still no ClusterIP, LoadBalancer or NodePort traffic is DNATed.
// A live rule is the dispatch when it jumps to Jump, or (nftables, whose
// vmap verdicts are no single jump) when its text contains Key: the part
// every layout and every --nodeport-addresses setting share. A Key
// dispatch is required only where the layout's own chain has it.
type Dispatch struct {
	Table, Chain, Jump, Key string
	// What says in plain words what breaks without it.
	What string
}

// Dispatches lists backend b's dispatch rules, one set per family.
func Dispatches(b backend.Backend) []Dispatch {
	if b == backend.NFTables {
		return []Dispatch{
			{vocab.NFTablesTable, "services", "", "vmap @service-ips", "ClusterIP, ExternalIP and LoadBalancer dispatch"},
			{vocab.NFTablesTable, "services", "", "vmap @service-nodeports", "NodePort dispatch"},
			// 1.38+: without it localhost NodePort traffic kube-proxy does
			// not serve times out instead of being rejected and counted.
			{vocab.NFTablesTable, "nodeport-endpoints-check", "", "vmap @" + LocalhostNodePortRejectMap, "localhost NodePort reject"},
		}
	}
	// A skeleton has one of the two NodePort chains: a dispatch whose
	// chain the skeleton lacks is another proxy mode's (check.go).
	return []Dispatch{
		{"nat", vocab.ChainServices, vocab.ChainNodePorts, "", "NodePort dispatch (the last rule of KUBE-SERVICES)"},
		{"nat", vocab.ChainServices, vocab.ChainIPVSNodePort, "", "NodePort dispatch (ipvs mode)"},
	}
}
