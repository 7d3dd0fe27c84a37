//go:build !kubeproxy_nftables_only

package main

import (
	v1 "k8s.io/api/core/v1"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
)

// iptablesClients are the k8s util/iptables clients per IP family that the
// iptables proxier and kubelet's startup rules use (Kubernetes 1.34 to
// 1.37; 1.38 replaced the package, see nftables_only.go).
type iptablesClients map[v1.IPFamily]utiliptables.Interface

func newIPTablesClients() iptablesClients { return iptablesClients{} }

// open makes one client per family, running the iptables* commands on PATH
// (the flavour the kube-proxy image's wrapper chose).
func (c iptablesClients) open(fams []v1.IPFamily) error {
	for _, f := range fams {
		proto := utiliptables.ProtocolIPv4
		if f == v1.IPv6Protocol {
			proto = utiliptables.ProtocolIPv6
		}
		c[f] = utiliptables.New(proto)
	}
	return nil
}
