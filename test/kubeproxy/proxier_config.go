//go:build kubeproxy_config_constructors

package main

// Kubernetes 1.37 and later: the proxier constructors take the whole
// KubeProxyConfiguration (the calls mirror cmd/kube-proxy/app/server_linux.go's
// createProxier).

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
	if c.Mode == config.ProxyModeNFTables {
		if len(p.families) == 2 {
			return nftables.NewDualStackProxier(ctx, c, p.detectors, nodeName, nodeIPs, p.recorder, p.healthz, false)
		}
		f := p.families[0]
		return nftables.NewProxier(ctx, c, f, p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, false)
	}
	if len(p.families) == 2 {
		return iptables.NewDualStackProxier(ctx, c, p.ipts, utilsysctl.New(), p.detectors, nodeName, nodeIPs, p.recorder, p.healthz, false)
	}
	f := p.families[0]
	return iptables.NewProxier(ctx, c, f, p.ipts[f], utilsysctl.New(), p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, false)
}
