package cleanup

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// verifyNFTables runs verify as the CLI will: Run, then the leftover check.
func verifyNFTables(t *testing.T) *verify.Result {
	t.Helper()
	root := hostfs.New("/")
	res, err := verify.Run(context.Background(), verify.Options{Expect: backend.NFTables, Reader: verify.NewReader(root)})
	if err != nil {
		t.Fatal(err)
	}
	verify.AddIPVSLeftovers(verify.Options{IPVS: ipvs.ReadFootprint}, res)
	return res
}

func resultText(res *verify.Result) string {
	var b strings.Builder
	verify.WriteText(&b, res)
	return b.String()
}

// The done-when of issue 21's leftover finding: a namespace holding
// kube-proxy's real nftables rules (the upstream dump, IPv4, and the
// rendered IPv6 table) plus the ipsets an ipvs-mode kube-proxy left fails
// verify with a finding naming them; a dry run changes nothing; the sweep
// removes exactly kube-proxy's sets and verify then passes. Other owners'
// sets (fail2ban's, kube-router's KUBE-SRC-*) and a kube-ipvs0 that is
// not a dummy link stay, each with its reason.
func TestIPVSLeftoversSweptInNetns(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.Setup(t, "", "nft", "ipset", "ip") {
		return
	}
	nstest.Sh(t, "nft -f "+filepath.Join(ref, "derived/nftables-overall-v4.reordered.nft"))
	expectedtest.Load(t, expected.Options{Backend: backend.NFTables, Families: []rules.Family{rules.IPv6}})
	if res := verifyNFTables(t); !res.OK {
		t.Fatalf("before the leftovers, verify fails:\n%s", resultText(res))
	}

	nstest.Sh(t, `
ipset create KUBE-CLUSTER-IP hash:ip,port family inet comment
ipset add KUBE-CLUSTER-IP 10.43.0.1,tcp:443
ipset create KUBE-LOOP-BACK hash:ip,port,ip family inet comment
ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 comment
ipset create KUBE-6-CLUSTER-IP hash:ip,port family inet6 comment
ipset create KUBE-SRC-ABCDEFGHIJ hash:ip family inet
ipset create f2b-sshd hash:ip family inet
ip link add kube-ipvs0 type veth peer name kube-ipvs0-peer
`)
	t.Log("kube-ipvs0 made as a veth link (this kernel has no dummy links): it must stay")
	res := verifyNFTables(t)
	if res.OK || res.Verdict != verify.VerdictFailed {
		t.Fatalf("with leftover ipsets verify passes:\n%s", resultText(res))
	}
	t.Logf("verify with the leftovers:\n%s", resultText(res))
	var msg string
	for _, f := range res.Findings {
		if f.Kind == verify.KindIPVSLeftoverSets {
			msg = f.Message
		} else {
			t.Errorf("unexpected finding %s: %s", f.Kind, f.Message)
		}
	}
	for _, name := range []string{"KUBE-CLUSTER-IP", "KUBE-LOOP-BACK", "KUBE-NODE-PORT-TCP", "KUBE-6-CLUSTER-IP"} {
		if !strings.Contains(msg, name) {
			t.Errorf("finding %q does not name %s", msg, name)
		}
	}
	for _, name := range []string{"KUBE-SRC-ABCDEFGHIJ", "f2b-sshd"} {
		if strings.Contains(msg, name) {
			t.Errorf("finding %q names %s, which is not kube-proxy's", msg, name)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "link kube-ipvs0 stays: it is of kind veth") {
		t.Errorf("notes %q do not say why the veth kube-ipvs0 is left", res.Notes)
	}

	before := nstest.Sh(t, "ipset list -n | sort")
	dry, err := SweepIPVS(true)
	if err != nil {
		t.Fatal(err)
	}
	if after := nstest.Sh(t, "ipset list -n | sort"); after != before {
		t.Fatalf("the dry run changed the sets:\n%s\nto\n%s", before, after)
	}
	if len(dry.Removals) != 4 || !strings.Contains(dry.Text(), "would remove 4 kube-proxy ipvs leftover(s)") {
		t.Errorf("dry run:\n%s", dry.Text())
	}
	t.Logf("dry run:\n%s", dry.Text())

	done, err := SweepIPVS(false)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, done.Text())
	}
	t.Logf("sweep:\n%s", done.Text())
	if got := nstest.Sh(t, "ipset list -n | sort"); got != "KUBE-SRC-ABCDEFGHIJ\nf2b-sshd\n" {
		t.Errorf("after the sweep the sets are %q, want only the other owners'", got)
	}
	nstest.Sh(t, "ip link show kube-ipvs0 >/dev/null")
	if res := verifyNFTables(t); !res.OK {
		t.Errorf("after the sweep verify fails:\n%s", resultText(res))
	}
	again, err := SweepIPVS(false)
	if err != nil || len(again.Removals) != 0 {
		t.Errorf("a second sweep: %v\n%s", err, again.Text())
	}
}

// A kube-proxy set a rule still uses (a stranded ipvs chain) fails verify
// but stays through the sweep, which says why.
func TestIPVSSweepLeavesReferencedSetInNetns(t *testing.T) {
	if !nstest.Setup(t, `
ipset create KUBE-LOOP-BACK hash:ip,port,ip family inet comment
iptables-nft -w -t nat -N KUBE-POSTROUTING
iptables-nft -w -t nat -A KUBE-POSTROUTING -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
`, "ipset", "iptables-nft") {
		return
	}
	s, err := SweepIPVS(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Removals) != 0 || !strings.Contains(s.Text(), "ipset KUBE-LOOP-BACK stays: 1 rule(s) still reference it") {
		t.Errorf("sweep:\n%s", s.Text())
	}
	nstest.Sh(t, "ipset list -n | grep -x KUBE-LOOP-BACK")
}
