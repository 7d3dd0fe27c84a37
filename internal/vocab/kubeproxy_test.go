package vocab

import "testing"

func TestIsNFTablesPerServiceChain(t *testing.T) {
	for chain, want := range map[string]bool{
		"service-ULMVA6XW-ns1/svc1/tcp/p80":                 true,
		"local-ULMVA6XW-ns1/svc1/tcp/p80":                   true,
		"external-ULMVA6XW-ns1/svc1/tcp/p80":                true,
		"firewall-ULMVA6XW-ns1/svc1/tcp/p80":                true,
		"endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80": true,
		// kube-proxy's fixed chains, some sharing a prefix
		"service-endpoints-check":  false,
		"firewall-check":           false,
		"services":                 false,
		"nodeport-endpoints-check": false,
		"filter-input":             false,
		// the iptables mode's chains
		"KUBE-SVC-ABCDEFGHIJKLMNOP": false,
		"KUBE-SERVICES":             false,
		// an affinity set's name is no chain of kube-proxy's
		"affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80": false,
	} {
		if got := IsNFTablesPerServiceChain(chain); got != want {
			t.Errorf("IsNFTablesPerServiceChain(%q) = %v, want %v", chain, got, want)
		}
	}
}

// Every release's and mode's fixed chains and every per-Service one are
// kube-proxy's; kubelet's, a CNI's and the built-in chains are not.
func TestIsKubeProxyChain(t *testing.T) {
	for chain, want := range map[string]bool{
		ChainServices: true, ChainExternalServices: true, ChainForward: true, ChainNodePorts: true,
		ChainProxyFirewall: true, ChainProxyCanary: true, ChainPostrouting: true, ChainMarkMasq: true,
		ChainMarkDrop: true, ChainIPVSLoadBalancer: true, ChainIPVSSourceRanges: true, ChainIPVSOutFilter: true,
		"KUBE-SVC-ABCDEFGHIJKLMNOP": true, "KUBE-SEP-ABCDEFGHIJKLMNOP": true, "KUBE-FW-ABCDEFGHIJKLMNOP": true,
		ChainFirewall: false, ChainKubeletCanary: false, ChainIptablesHint: false,
		"KUBE-ROUTER-INPUT": false, "FORWARD": false, "KUBE-SERVICES-X": false, "": false,
	} {
		if got := IsKubeProxyChain(chain); got != want {
			t.Errorf("IsKubeProxyChain(%q) = %v, want %v", chain, got, want)
		}
	}
}
