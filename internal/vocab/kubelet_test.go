package vocab

import "testing"

func TestKubeletHints(t *testing.T) {
	if !IsKubeletHint("mangle", "KUBE-IPTABLES-HINT") || !IsKubeletHint("mangle", "KUBE-KUBELET-CANARY") {
		t.Error("kubelet's mangle hint and canary are hints")
	}
	if IsKubeletHint("nat", "KUBE-KUBELET-CANARY") {
		t.Error("only mangle holds the hint iptables-wrappers looks for")
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
