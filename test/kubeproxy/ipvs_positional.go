//go:build !kubeproxy_config_constructors

package main

// Kubernetes 1.34 to 1.36's ipvs proxier, settings as positional arguments
// (as cmd/kube-proxy/app/server_linux.go's createProxier calls it), with
// the real iptables and ipset and kube-proxy's fakes for IPVS, kube-ipvs0
// and the vs sysctls (ipvs_fakes.go).

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	netutils "k8s.io/utils/net"
)

func newIPVSProxier(ctx context.Context, p proxierParams) (proxy.Provider, error) {
	c := p.config
	set := utilipset.New()
	return perFamilyIPVS(p, func(f v1.IPFamily) (*ipvs.Proxier, error) {
		return ipvs.NewProxier(ctx, f, p.ipts[f], p.ipvs.ipvs, set, p.ipvs.sysctl,
			c.SyncPeriod.Duration, c.MinSyncPeriod.Duration, filterFamily(f, c.IPVS.ExcludeCIDRs),
			c.IPVS.StrictARP, c.IPVS.TCPTimeout.Duration, c.IPVS.TCPFinTimeout.Duration,
			c.IPVS.UDPTimeout.Duration, c.Linux.MasqueradeAll, int(*c.IPTables.MasqueradeBit),
			p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, c.IPVS.Scheduler,
			c.NodePortAddresses, false)
	})
}

// filterFamily keeps family f's CIDRs, as NewDualStackProxier does for each
// of its proxiers.
func filterFamily(f v1.IPFamily, cidrs []string) []string {
	var out []string
	for _, c := range cidrs {
		if netutils.IsIPv6CIDRString(c) == (f == v1.IPv6Protocol) {
			out = append(out, c)
		}
	}
	return out
}
