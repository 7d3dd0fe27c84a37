package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// The sweep that ends a migration off ipvs, on real netfilter: ipvs mode's
// chains (in iptables-nft, where it ran, and stranded in legacy) hold
// kube-proxy's sets through --match-set, so the sets go only once those
// chains do. The live iptables-mode chain (KUBE-SERVICES), another
// owner's set and the chain that uses it (fail2ban's), and kube-router's
// KUBE-SRC-* set all stay; the sysctls ipvs leaves are said.
func TestSweepAfterIPVSInNetns(t *testing.T) {
	if !nstest.Setup(t, `
ipset create KUBE-LOAD-BALANCER hash:ip,port family inet comment
ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 comment
ipset create KUBE-CLUSTER-IP hash:ip,port family inet comment
ipset create KUBE-SRC-ABCDEFGHIJ hash:ip family inet
ipset create f2b-sshd hash:ip family inet
iptables-nft -w -t nat -N KUBE-SERVICES
iptables-nft -w -t nat -A KUBE-SERVICES -d 10.43.0.1/32 -p tcp --dport 443 -j RETURN
iptables-nft -w -t nat -N KUBE-LOAD-BALANCER
iptables-nft -w -t nat -A KUBE-LOAD-BALANCER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
iptables-nft -w -N KUBE-IPVS-FILTER
iptables-nft -w -A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
iptables-nft -w -A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER
iptables-nft -w -N f2b-sshd
iptables-nft -w -A f2b-sshd -m set --match-set f2b-sshd src -j REJECT
iptables-nft -w -A INPUT -p tcp --dport 22 -j f2b-sshd
iptables-legacy -w -N KUBE-NODE-PORT
iptables-legacy -w -A KUBE-NODE-PORT -p tcp -m set --match-set KUBE-NODE-PORT-TCP dst -j ACCEPT
iptables-legacy -w -A INPUT -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT
`, "ipset", "iptables-nft", "iptables-legacy", "iptables-nft-save", "iptables-legacy-save", "ip6tables-nft-save", "ip6tables-legacy-save") {
		return
	}
	// SweepIPVS alone (cleanup --ipvs-leftovers) cannot destroy a set a
	// rule still references.
	if s, err := SweepIPVS(true); err != nil || len(s.Removals) != 0 {
		t.Fatalf("before the chains go, the sets are removable: %v\n%s", err, s.Text())
	}
	// A dry run (cleanup --ipvs-leftovers --dry-run) changes nothing and
	// says what would go.
	before := nstest.Sh(t, "iptables-nft-save | grep -v '^#'; iptables-legacy-save | grep -v '^#'; ipset list -n")
	dry, err := SweepAfterIPVS(context.Background(), Tools(true), true)
	if err != nil || !strings.Contains(dry.Text(), "would remove 3 kube-proxy object(s) from iptables-nft") {
		t.Errorf("dry run: %v\n%s", err, dry.Text())
	}
	if after := nstest.Sh(t, "iptables-nft-save | grep -v '^#'; iptables-legacy-save | grep -v '^#'; ipset list -n"); after != before {
		t.Fatalf("the dry run changed the namespace:\n%s\nto\n%s", before, after)
	}
	got, err := SweepAfterIPVS(context.Background(), Exec, false)
	t.Logf("sweep:\n%s", got.Text())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if sets := nstest.Sh(t, "ipset list -n | sort"); sets != "KUBE-SRC-ABCDEFGHIJ\nf2b-sshd\n" {
		t.Errorf("sets after the sweep %q, want only the other owners'", sets)
	}
	nft := nstest.Sh(t, "iptables-nft-save")
	for _, want := range []string{":KUBE-SERVICES", "-A KUBE-SERVICES -d 10.43.0.1/32", ":f2b-sshd", "-A INPUT -p tcp -m tcp --dport 22 -j f2b-sshd"} {
		if !strings.Contains(nft, want) {
			t.Errorf("iptables-nft lost %q:\n%s", want, nft)
		}
	}
	legacy := nstest.Sh(t, "iptables-legacy-save")
	for _, text := range []string{nft, legacy} {
		for _, gone := range []string{"KUBE-LOAD-BALANCER", "KUBE-IPVS-FILTER", "KUBE-NODE-PORT"} {
			if strings.Contains(text, gone) {
				t.Errorf("%s survived the sweep:\n%s", gone, text)
			}
		}
	}
	if text := got.Text(); !strings.Contains(text, "removed 3 kube-proxy object(s) from iptables-nft") || !strings.Contains(text, "removed 2 kube-proxy object(s) from iptables-legacy") ||
		!strings.Contains(text, "net.ipv4.vs.*: not in this kernel (no IPVS), nothing left") {
		t.Errorf("report:\n%s", text)
	}
	if len(got.Remaining) != 0 {
		t.Errorf("remaining %q", got.Remaining)
	}
}
