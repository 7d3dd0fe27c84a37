package testhost

// RKE2v137 installs an RKE2 v1.37 server (tarball layout): the last
// Kubernetes minor whose kube-proxy takes its iptables flavour from the
// image's wrapper script, that is from IPTABLES_MODE.
func (h *Host) RKE2v137() *Host {
	h.t.Helper()
	return h.RKE2Unit("tarball", "server").RKE2Version("v1.37.2+rke2r1")
}

// PinnedIptablesMode writes /etc/rancher/rke2/config.yaml pinning
// kube-proxy to an iptables flavour the way operators did before 1.38:
// proxy-mode=iptables and IPTABLES_MODE=mode ("legacy" or "nft") in
// kube-proxy's environment.
func (h *Host) PinnedIptablesMode(mode string) *Host {
	h.t.Helper()
	if mode != "legacy" && mode != "nft" {
		h.t.Fatalf("testhost: PinnedIptablesMode(%q): want legacy or nft", mode)
	}
	return h.RKE2Config("config.yaml", "write-kubeconfig-mode: \"0644\"\nkube-proxy-arg:\n  - proxy-mode=iptables\nkube-proxy-extra-env:\n  - IPTABLES_MODE="+mode+"\n")
}
