//go:build kubeproxy_config_constructors && !kubeproxy_nftables_only

package main

// Kubernetes 1.37's ipvs proxier, with the whole KubeProxyConfiguration
// (as cmd/kube-proxy/app/server_linux.go's createProxier calls it), the
// real iptables and ipset and kube-proxy's fakes for IPVS, kube-ipvs0 and
// the vs sysctls (ipvs_fakes.go).

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
)

func newIPVSProxier(ctx context.Context, p proxierParams) (proxy.Provider, error) {
	set := utilipset.New()
	return perFamilyIPVS(p, func(f v1.IPFamily) (*ipvs.Proxier, error) {
		return ipvs.NewProxier(ctx, p.config, f, p.ipts[f], p.ipvs.ipvs, set, p.ipvs.sysctl,
			p.detectors[f], nodeName, nodeIPs[f], p.recorder, p.healthz, false)
	})
}
