// Package kubeproxy talks to kube-proxy's local HTTP endpoints on this
// node: where its metrics server listens (from RKE2's effective
// kube-proxy-arg), /proxyMode and /metrics. Every request stays on the node
// (a loopback address or one of the node's own, no proxy, no redirect),
// every answer is bounded, and every figure read from /metrics is finite
// and its series bounded. What an answer means for the node (a finding, a
// note) is for the caller (verify) to judge.
package kubeproxy
