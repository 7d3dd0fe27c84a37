package oracle

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// TestProgramIPVS runs kube-proxy's ipvs proxier for every minor that has
// it, on both iptables flavours, and checks in the kernel that its chains
// are in that flavour and not the other, that its KUBE-* ipsets are real
// sets holding every Service's cluster IP, and that the fakes (IPVS, the
// kube-ipvs0 link, the vs sysctls) hold a virtual server and a kube-ipvs0
// address for every Service.
func TestProgramIPVS(t *testing.T) {
	eachCell(t, Options{Services: 16, IPv6: true, Kubelet: true, IPVS: true}, func(t *testing.T, minor string, b backend.Backend, o Options) {
		if !nstest.InNetns(t) {
			return
		}
		r := Program(t, minor, b, o)
		if r.IPVS == nil || !strings.Contains(r.IPVS.Faked, "fake IPVS") {
			t.Fatalf("ipvs mode returned no account of its fakes: %+v", r.IPVS)
		}
		checkIPVSFootprint(t, b, r)
	})
}

func checkIPVSFootprint(t *testing.T, b backend.Backend, r Result) {
	t.Helper()
	sets := run(t, "ipset", "list", "-n")
	for family := range r.Services {
		dump := dumpFamily(t, b, family)
		for _, want := range ipvsObjects {
			if !regexp.MustCompile(want).MatchString(dump) {
				t.Errorf("ipvs on %s %s: no match for %s in\n%s", b, family, want, head(dump))
			}
		}
		if other := dumpFamily(t, otherFlavour(b), family); strings.Contains(other, "KUBE-") {
			t.Errorf("ipvs on %s %s: kube chains stranded in %s:\n%s", b, family, otherFlavour(b), head(other))
		}
		prefix := map[string]string{"IPv4": "KUBE-", "IPv6": "KUBE-6-"}[family]
		for _, set := range []string{"CLUSTER-IP", "LOOP-BACK", "NODE-PORT-TCP", "LOAD-BALANCER", "EXTERNAL-IP"} {
			if !regexp.MustCompile(`(?m)^` + prefix + set + `$`).MatchString(sets) {
				t.Errorf("ipvs %s: no ipset %s%s in:\n%s", family, prefix, set, sets)
			}
		}
		if len(r.IPVS.KubeIPVS0[family]) == 0 {
			t.Errorf("ipvs %s: nothing bound to the fake kube-ipvs0: %v", family, r.IPVS.KubeIPVS0)
		}
	}
	members := run(t, "ipset", "list", "KUBE-CLUSTER-IP")
	for _, addr := range r.IPVS.KubeIPVS0["IPv4"] {
		if strings.HasPrefix(addr, "10.43.") && !strings.Contains(members, addr+",") {
			t.Errorf("cluster IP %s is on kube-ipvs0 but not in KUBE-CLUSTER-IP:\n%s", addr, members)
		}
	}
	if len(r.IPVS.VirtualServers) < len(r.Services["IPv4"]) {
		t.Errorf("the fake IPVS holds %d virtual servers for %d IPv4 Services", len(r.IPVS.VirtualServers), len(r.Services["IPv4"]))
	}
	if r.IPVS.Sysctls["net/ipv4/vs/conntrack"] != 1 {
		t.Errorf("ipvs mode did not set net/ipv4/vs/conntrack=1: %v", r.IPVS.Sysctls)
	}
}

// ipvsObjects are what every known minor's ipvs proxier writes for a family.
var ipvsObjects = []string{
	`(?m)^-A PREROUTING .*-j KUBE-SERVICES$`, `(?m)^-A OUTPUT .*-j KUBE-SERVICES$`,
	`(?m)^-A POSTROUTING .*-j KUBE-POSTROUTING$`,
	`(?m)^-A INPUT .*-j KUBE-IPVS-FILTER$`, `(?m)^-A OUTPUT .*-j KUBE-IPVS-OUT-FILTER$`,
	`(?m)^:KUBE-MARK-MASQ `, `(?m)^:KUBE-FORWARD `, `(?m)^:KUBE-NODE-PORT `, `(?m)^:KUBE-LOAD-BALANCER `,
	`(?m)^-A KUBE-SERVICES .*--match-set KUBE-(6-)?CLUSTER-IP dst,dst`,
}
