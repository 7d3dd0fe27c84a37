package main

import (
	"fmt"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
)

// defaultConfig is kube-proxy's own configuration with its own defaults
// (sync periods, masquerade bit, localhost node ports...), built the way
// kube-proxy builds it from an empty config file, plus the proxy mode.
func defaultConfig(mode config.ProxyMode) (*config.KubeProxyConfiguration, error) {
	external := &kubeproxyv1alpha1.KubeProxyConfiguration{}
	scheme.Scheme.Default(external)
	internal := &config.KubeProxyConfiguration{}
	if err := scheme.Scheme.Convert(external, internal, nil); err != nil {
		return nil, fmt.Errorf("converting kube-proxy's defaulted v1alpha1 configuration: %w", err)
	}
	internal.Mode = mode
	return internal, nil
}
