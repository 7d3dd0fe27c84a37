package vocab

import "testing"

func TestKubeletHints(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		if !IsKubeletHint(legacy, "mangle", "KUBE-IPTABLES-HINT") || !IsKubeletHint(legacy, "mangle", "KUBE-KUBELET-CANARY") {
			t.Errorf("legacy %v: kubelet's mangle hint and canary are hints", legacy)
		}
	}
	if IsKubeletHint(false, "nat", "KUBE-KUBELET-CANARY") {
		t.Error("DetectMode reads nft's mangle only")
	}
	if !IsKubeletHint(true, "nat", "KUBE-KUBELET-CANARY") {
		t.Error("DetectMode reads every legacy table")
	}
	if !IsKubeletHintChain("KUBE-KUBELET-CANARY") || IsKubeletHintChain("KUBE-FIREWALL") {
		t.Error("KUBE-FIREWALL is kubelet's but no hint")
	}
}

func TestKubeletAndKubeProxyChainsAreDisjoint(t *testing.T) {
	for _, c := range []string{ChainIptablesHint, ChainKubeletCanary, ChainFirewall} {
		if !IsKubeletChain(c) || IsKubeProxyChain(c) {
			t.Errorf("%s: kubelet's = %v, kube-proxy's = %v; want kubelet's only", c, IsKubeletChain(c), IsKubeProxyChain(c))
		}
	}
	for _, c := range []string{ChainServices, ChainMarkDrop, "KUBE-LOAD-BALANCER", PrefixEndpoint + "SXIVWICOYRO3J4NJ"} {
		if IsKubeletChain(c) || !IsKubeProxyChain(c) {
			t.Errorf("%s: kubelet's = %v, kube-proxy's = %v; want kube-proxy's only", c, IsKubeletChain(c), IsKubeProxyChain(c))
		}
	}
}
