//go:build !kubeproxy_nftables_only

package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
)

// kubeletRules writes what kubelet writes at startup
// (pkg/kubelet/kubelet_network_linux.go: initNetworkUtil and
// syncIPTablesRules), through the same k8s util/iptables client and so with
// the same iptables flavour as kube-proxy: the KUBE-IPTABLES-HINT chain, the
// IPv4 KUBE-FIREWALL martian-packet rule and its INPUT/OUTPUT jumps, and the
// KUBE-KUBELET-CANARY chains its Monitor creates. kubelet is not importable
// as a library without all of kubelet, so the calls are repeated here; they
// have been the same from 1.34 to 1.37.
func kubeletRules(ctx context.Context, ipts iptablesClients, fams []v1.IPFamily) error {
	const canary = utiliptables.Chain("KUBE-KUBELET-CANARY")
	tables := []utiliptables.Table{utiliptables.TableMangle, utiliptables.TableNAT, utiliptables.TableFilter}
	for _, f := range fams {
		ipt := ipts[f]
		if _, err := ipt.EnsureChain(utiliptables.TableMangle, "KUBE-IPTABLES-HINT"); err != nil {
			return fmt.Errorf("kubelet %s: KUBE-IPTABLES-HINT: %w", f, err)
		}
		if !ipt.IsIPv6() {
			const fw = utiliptables.Chain("KUBE-FIREWALL")
			if _, err := ipt.EnsureChain(utiliptables.TableFilter, fw); err != nil {
				return fmt.Errorf("kubelet %s: KUBE-FIREWALL: %w", f, err)
			}
			for _, c := range []utiliptables.Chain{utiliptables.ChainOutput, utiliptables.ChainInput} {
				if _, err := ipt.EnsureRule(utiliptables.Prepend, utiliptables.TableFilter, c, "-j", string(fw)); err != nil {
					return fmt.Errorf("kubelet %s: %s jump to KUBE-FIREWALL: %w", f, c, err)
				}
			}
			if _, err := ipt.EnsureRule(utiliptables.Append, utiliptables.TableFilter, fw,
				"-m", "comment", "--comment", "block incoming localnet connections",
				"--dst", "127.0.0.0/8",
				"!", "--src", "127.0.0.0/8",
				"-m", "conntrack",
				"!", "--ctstate", "RELATED,ESTABLISHED,DNAT",
				"-j", "DROP"); err != nil {
				return fmt.Errorf("kubelet %s: KUBE-FIREWALL localnet rule: %w", f, err)
			}
		}
		// kubelet then runs Monitor, whose first act is creating the canary
		// chains; run the real Monitor and wait for them. Its stop channel
		// must never close (kubelet's is wait.NeverStop): a stopped Monitor
		// deletes its canaries, which would race this program's exit.
		go ipt.Monitor(canary, tables, func() {}, time.Minute, wait.NeverStop)
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			for _, t := range tables {
				if ok, err := ipt.ChainExists(t, canary); err != nil || !ok {
					return false, nil
				}
			}
			return true, nil
		}); err != nil {
			return fmt.Errorf("kubelet %s: the KUBE-KUBELET-CANARY chains did not appear within 30s: %w", f, err)
		}
	}
	return nil
}
