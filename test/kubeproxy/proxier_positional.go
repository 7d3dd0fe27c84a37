//go:build !kubeproxy_config_constructors

package main

// Kubernetes 1.34 to 1.36: the proxier constructors take kube-proxy's
// settings as positional arguments (the calls mirror
// cmd/kube-proxy/app/server_linux.go's createProxier).

import (
	"context"

	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/nftables"
)

func newProxier(ctx context.Context, p proxierParams) (proxy.Provider, error) {
	c := p.config
	if c.Mode == config.ProxyModeIPVS {
		return newIPVSProxier(ctx, p)
	}
	if c.Mode == config.ProxyModeNFTables {
		if len(p.families) == 2 {
			return nftables.NewDualStackProxier(ctx, c.SyncPeriod.Duration, c.MinSyncPeriod.Duration,
				c.Linux.MasqueradeAll, int(*c.NFTables.MasqueradeBit), p.detectors, nodeName, nodeIPs,
				p.recorder, p.healthz, c.NodePortAddresses, false)
		}
		f := p.families[0]
		return nftables.NewProxier(ctx, f, c.SyncPeriod.Duration, c.MinSyncPeriod.Duration,
			c.Linux.MasqueradeAll, int(*c.NFTables.MasqueradeBit), p.detectors[f], nodeName, nodeIPs[f],
			p.recorder, p.healthz, c.NodePortAddresses, false)
	}
	if len(p.families) == 2 {
		return iptables.NewDualStackProxier(ctx, p.ipts, utilsysctl.New(), c.SyncPeriod.Duration,
			c.MinSyncPeriod.Duration, c.Linux.MasqueradeAll, *c.IPTables.LocalhostNodePorts,
			int(*c.IPTables.MasqueradeBit), p.detectors, nodeName, nodeIPs, p.recorder, p.healthz,
			c.NodePortAddresses, false)
	}
	f := p.families[0]
	return iptables.NewProxier(ctx, f, p.ipts[f], utilsysctl.New(), c.SyncPeriod.Duration,
		c.MinSyncPeriod.Duration, c.Linux.MasqueradeAll, *c.IPTables.LocalhostNodePorts,
		int(*c.IPTables.MasqueradeBit), p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz,
		c.NodePortAddresses, false)
}
