//go:build kubeproxy_config_constructors

package main

// Kubernetes 1.37 and later: the proxier constructors take the whole
// KubeProxyConfiguration (the calls mirror cmd/kube-proxy/app/server_linux.go's
// createProxier). The iptables proxier is in proxier_config_iptables.go,
// which 1.38's oracle cannot build (see nftables_only.go).

import (
	"context"

	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/nftables"
)

func newProxier(ctx context.Context, p proxierParams) (proxy.Provider, error) {
	c := p.config
	if c.Mode == config.ProxyModeIPVS {
		return newIPVSProxier(ctx, p)
	}
	if c.Mode != config.ProxyModeNFTables {
		return newIPTablesProxier(ctx, p)
	}
	if len(p.families) == 2 {
		return nftables.NewDualStackProxier(ctx, c, p.detectors, nodeName, nodeIPs, p.recorder, p.healthz, false)
	}
	f := p.families[0]
	return nftables.NewProxier(ctx, c, f, p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, false)
}
