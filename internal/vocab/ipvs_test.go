package vocab

import "testing"

func TestIsKubeProxyIPSet(t *testing.T) {
	for name, want := range map[string]bool{
		"KUBE-CLUSTER-IP":                  true,
		"KUBE-6-CLUSTER-IP":                true,
		"KUBE-NODE-PORT-LOCAL-SCTP-HASH":   true,
		"KUBE-6-NODE-PORT-LOCAL-SCTP-HAS":  true, // kube-proxy's cut to 31 bytes
		"KUBE-6-LOAD-BALANCER-SOURCE-CID":  true,
		"KUBE-6-LOAD-BALANCER-SOURCE-CIDR": false,
		"KUBE-SRC-ABCDEF":                  false, // kube-router's network policy
		"KUBE-DST-ABCDEF":                  false,
		"f2b-sshd":                         false,
	} {
		if got := IsKubeProxyIPSet(name); got != want {
			t.Errorf("IsKubeProxyIPSet(%q) = %v, want %v", name, got, want)
		}
	}
	for _, n := range IPVSIPSets() {
		if len(n) > 31 {
			t.Errorf("%s: longer than ipset's 31 bytes", n)
		}
	}
}
