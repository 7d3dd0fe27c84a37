//go:build kubeproxy_config_constructors && !kubeproxy_nftables_only

package main

import (
	"context"

	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/iptables"
)

// newIPTablesProxier is 1.37's iptables proxier with the whole
// KubeProxyConfiguration.
func newIPTablesProxier(ctx context.Context, p proxierParams) (proxy.Provider, error) {
	c := p.config
	if len(p.families) == 2 {
		return iptables.NewDualStackProxier(ctx, c, p.ipts, utilsysctl.New(), p.detectors, nodeName, nodeIPs, p.recorder, p.healthz, false)
	}
	f := p.families[0]
	return iptables.NewProxier(ctx, c, f, p.ipts[f], utilsysctl.New(), p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, false)
}
