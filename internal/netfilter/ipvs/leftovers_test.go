package ipvs

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
)

func TestClassifyTakesOnlyKubeProxys(t *testing.T) {
	a := netip.MustParseAddr
	f := Footprint{
		Sets: []ipset.Set{
			{Name: "KUBE-CLUSTER-IP", Type: "hash:ip,port"},
			{Name: "KUBE-6-LOOP-BACK", Type: "hash:ip,port,ip"},
			{Name: "KUBE-NODE-PORT-TCP", Type: "bitmap:port", References: 2},
			{Name: "KUBE-SRC-XYZ", Type: "hash:ip"}, // kube-router's
			{Name: "f2b-sshd", Type: "hash:ip"},
		},
		Link:      Link{Name: "kube-ipvs0", Index: 7, Kind: "dummy", Addrs: []netip.Addr{a("10.43.0.1"), a("192.0.2.50")}},
		LinkFound: true,
		Services: Services{Present: true, List: []Service{
			{Addr: a("10.43.0.1"), Protocol: 6, Port: 443},
			{Addr: a("192.0.2.50"), Protocol: 6, Port: 80},
			{Addr: a("192.0.2.99"), Protocol: 6, Port: 80}, // keepalived's VIP
			{Fwmark: 9},
		}},
	}
	l := Classify(f)
	if len(l.Sets) != 2 || l.Sets[0].Name != "KUBE-CLUSTER-IP" || l.Sets[1].Name != "KUBE-6-LOOP-BACK" {
		t.Errorf("sets %+v, want KUBE-CLUSTER-IP and KUBE-6-LOOP-BACK", l.Sets)
	}
	if len(l.ReferencedSets) != 1 || l.ReferencedSets[0].Name != "KUBE-NODE-PORT-TCP" {
		t.Errorf("referenced %+v", l.ReferencedSets)
	}
	if l.Link == nil || len(l.Services) != 2 {
		t.Errorf("link %+v, services %+v: want kube-ipvs0 and the two on it", l.Link, l.Services)
	}
	left := strings.Join(l.Left, "\n")
	for _, want := range []string{"ipset KUBE-NODE-PORT-TCP stays: 2 rule(s)", "2 IPVS virtual server(s) stay"} {
		if !strings.Contains(left, want) {
			t.Errorf("left %q, want %q", left, want)
		}
	}

	f.Link.Kind = "veth"
	l = Classify(f)
	if l.Link != nil || len(l.Services) != 0 || !strings.Contains(strings.Join(l.Left, "\n"), "link kube-ipvs0 stays: it is of kind veth") {
		t.Errorf("a veth kube-ipvs0: %+v, want it and every server left", l)
	}
}
