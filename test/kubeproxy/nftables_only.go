//go:build kubeproxy_nftables_only

package main

// Kubernetes 1.38 and later, as far as they can be built here: 1.38 removed
// k8s.io/kubernetes/pkg/util/iptables, and its iptables proxier, kubelet's
// startup rules and kube-proxy's cleanup use sigs.k8s.io/iptables-wrappers
// v1.0.0 instead, which the Go module proxy does not serve. go.v1.38.mod
// replaces that module by an empty stub (iptables-wrappers-stub/go.mod) so
// the nftables proxier, which imports none of it, builds; everything that
// needs the real module fails here with this error instead.

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/proxy"
)

var errNoIPTablesWrappers = errors.New("this oracle is built without sigs.k8s.io/iptables-wrappers (the Go module proxy does not serve v1.0.0, which Kubernetes 1.38 requires), so it has only the nftables proxier: no --mode iptables or ipvs, no --kubelet")

type iptablesClients struct{}

func newIPTablesClients() iptablesClients { return iptablesClients{} }

func (iptablesClients) open([]v1.IPFamily) error { return errNoIPTablesWrappers }

func kubeletRules(context.Context, iptablesClients, []v1.IPFamily) error {
	return errNoIPTablesWrappers
}

func newIPTablesProxier(context.Context, proxierParams) (proxy.Provider, error) {
	return nil, errNoIPTablesWrappers
}

func newIPVSProxier(context.Context, proxierParams) (proxy.Provider, error) {
	return nil, errNoIPTablesWrappers
}

// ipvsFakes has nothing to fake without the ipvs proxier.
type ipvsFakes struct{}

const ipvsFaked = "nothing (no ipvs proxier in this oracle)"

func newIPVSFakes() *ipvsFakes { return &ipvsFakes{} }

func (*ipvsFakes) dump(string) error { return errNoIPTablesWrappers }
