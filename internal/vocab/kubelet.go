package vocab

// kubelet's chains, created with the host's iptables
// (pkg/kubelet/kubelet_network_linux.go).
const (
	// ChainIptablesHint (mangle) tells kube-proxy's image which iptables
	// backend the host uses.
	ChainIptablesHint = "KUBE-IPTABLES-HINT"
	// ChainKubeletCanary is in mangle, nat and filter.
	ChainKubeletCanary = "KUBE-KUBELET-CANARY"
	// ChainFirewall (filter, IPv4) is shared: kube-proxy ensures an
	// identical copy, but never deletes it (CleanupLeftovers skips it), so
	// it counts as kubelet's.
	ChainFirewall = "KUBE-FIREWALL"
)

// IsKubeletChain reports whether chain is one kubelet creates.
func IsKubeletChain(chain string) bool {
	return chain == ChainFirewall || IsKubeletHintChain(chain)
}

// IsKubeletHint reports whether chain, in table of iptables-legacy (legacy)
// or iptables-nft, is one of kubelet's chains that iptables-wrappers'
// DetectMode (and kube-proxy 1.38, which does the same) counts when it
// picks the host's iptables: nft's mangle table only (iptables-nft-save -t
// mangle), but every legacy table (iptables-legacy-save with no -t), so a
// legacy canary left in nat or filter alone still sends it to legacy.
func IsKubeletHint(legacy bool, table, chain string) bool {
	return (legacy || table == "mangle") && IsKubeletHintChain(chain)
}

// IsKubeletHintChain reports whether chain is kubelet's hint or canary,
// whatever the table (kubelet puts the canary in mangle, nat and filter).
func IsKubeletHintChain(chain string) bool {
	return chain == ChainIptablesHint || chain == ChainKubeletCanary
}

// KubeletHintsFix is how to make kubelet write its hint chains in the
// iptables flavour mode ("legacy" or "nft"), which is where kube-proxy
// 1.38 looks: the same words in detect's warning and the fleet view.
func KubeletHintsFix(mode string) string {
	fix := "move the host's iptables alternative to " + mode + " (`update-alternatives --set iptables /usr/sbin/iptables-" + mode + "`, and ip6tables likewise) so kubelet writes its chains there, restart RKE2"
	if mode == "legacy" {
		fix += ", then remove the stale ones in iptables-nft with `rke2-proxy-backend cleanup --kubelet-hints`"
	}
	return fix
}
