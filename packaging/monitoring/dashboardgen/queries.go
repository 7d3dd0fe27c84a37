package main

import "strings"

// The dashboard's queries, one place: each refers only to series the tool's
// textfiles (rke2_proxy_backend_*), kube-proxy's /metrics (kubeproxy_*) and
// kube-state-metrics' kube_node_labels export, which the monitoring tests
// check against a real textfile and a real kube-proxy page.
//
// Every rke2_proxy_backend_* and kubeproxy_* series needs a `node` label
// (the scrape config relabels __meta_kubernetes_pod_node_name or
// __meta_kubernetes_node_name to it, as the rules file says), and
// kube_node_labels the pool (--metric-labels-allowlist=nodes=[node-pool]).

// poolVar is the dashboard variable of the pools shown (label node-pool).
const poolVar = "pool"

// inPool joins expr's series (one or more per node) with the node's pool,
// adding a pool label and keeping only the nodes of the selected pools.
// max by drops kube-state-metrics' own labels and duplicate replicas.
func inPool(expr string) string {
	return "(" + expr + `) * on (node) group_left (pool) max by (node, pool) (label_replace(kube_node_labels{label_node_pool=~"$` + poolVar + `"}, "pool", "$1", "label_node_pool", "(.*)"))`
}

// withBackend labels kube-proxy's own series (scraped from kube-proxy,
// which knows no backend) with the backend verify expects on the node.
func withBackend(expr string) string {
	return inPool("(" + expr + ") * on (node) group_left (backend) max by (node, backend) (rke2_proxy_backend_info)")
}

// p99 is the 99th percentile per backend of one of kube-proxy's histograms.
func p99(histogram string) string {
	return "histogram_quantile(0.99, sum by (backend, le) (" + withBackend("rate("+histogram+"_bucket[$__rate_interval])") + "))"
}

// kubeProxyFailures are kube-proxy's sync failure counters, each backend's.
var kubeProxyFailures = []string{
	"kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
	"kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
	"kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
	"kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
}

func failureRates() string {
	parts := make([]string, len(kubeProxyFailures))
	for i, m := range kubeProxyFailures {
		parts[i] = "rate(" + m + "[$__rate_interval])"
	}
	// or keeps each counter a node exports: an iptables node has no
	// nftables counters and the other way round.
	return "sum by (backend) (" + withBackend(strings.Join(parts, " or ")) + ")"
}
