package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// kubeletAlone is --kubelet-only: kubelet's startup rules (kubeletRules)
// for fams through the iptables* commands on PATH, and nothing of
// kube-proxy's. The RKE2 stand-in plays kubelet with it, so a boot test's
// node has what the real kubelet of the oracle's minor writes, KUBE-FIREWALL
// included, and not a copy of it.
func kubeletAlone(fams []v1.IPFamily, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ipts := newIPTablesClients()
	if err := ipts.open(fams); err != nil {
		return err
	}
	if err := kubeletRules(ctx, ipts, fams); err != nil {
		return err
	}
	fmt.Printf("kubeproxy-oracle: kubelet's startup rules written for %v\n", fams)
	return nil
}
