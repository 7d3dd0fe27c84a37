package main

import (
	"net"

	v1 "k8s.io/api/core/v1"
)

// The node and the cluster the oracle pretends to be part of: RKE2's default
// cluster and service CIDRs (IPv4, and the IPv6 ones its docs use for
// dual-stack), one node with one address per family.
const nodeName = "oracle-node"

var (
	clusterCIDRs = map[v1.IPFamily]string{v1.IPv4Protocol: "10.42.0.0/16", v1.IPv6Protocol: "2001:cafe:42::/56"}
	serviceCIDRs = map[v1.IPFamily]string{v1.IPv4Protocol: "10.43.0.0/16", v1.IPv6Protocol: "2001:cafe:43::/112"}
	nodeIPs      = map[v1.IPFamily]net.IP{v1.IPv4Protocol: net.ParseIP("192.168.122.10"), v1.IPv6Protocol: net.ParseIP("fd00:122::10")}
)

// families lists the IP families the proxier serves: IPv4 always, IPv6 only
// when the node has it (kube-proxy runs single-stack otherwise).
func families(ipv6 bool) []v1.IPFamily {
	if ipv6 {
		return []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
	}
	return []v1.IPFamily{v1.IPv4Protocol}
}
