// An empty stand-in for sigs.k8s.io/iptables-wrappers v1.0.0, which
// Kubernetes 1.38 requires and the Go module proxy does not serve.
// go.v1.38.mod replaces the module by this directory so the module graph
// resolves; it holds no package, so only the code that imports none of it
// builds: the nftables proxier does, the iptables proxier, kubelet's
// iptables rules and kube-proxy's cleanup do not (test/kubeproxy/nftables_only.go).
module sigs.k8s.io/iptables-wrappers

go 1.24
