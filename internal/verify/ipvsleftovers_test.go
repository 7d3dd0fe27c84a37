package verify

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
)

func TestIPVSLeftoverFindings(t *testing.T) {
	a := netip.MustParseAddr
	f := ipvs.Footprint{
		Sets: []ipset.Set{
			{Name: "KUBE-CLUSTER-IP", Type: "hash:ip,port"},
			{Name: "KUBE-NODE-PORT-UDP", Type: "bitmap:port", References: 1},
			{Name: "KUBE-DST-ABC", Type: "hash:ip"},
		},
		Link:      ipvs.Link{Name: "kube-ipvs0", Kind: "dummy", Index: 4, Addrs: []netip.Addr{a("10.43.0.1"), a("203.0.113.7")}},
		LinkFound: true,
		Services: ipvs.Services{Present: true, List: []ipvs.Service{
			{Addr: a("10.43.0.1"), Protocol: 6, Port: 443},
			{Addr: a("198.51.100.1"), Protocol: 6, Port: 80},
		}},
	}
	findings, notes := IPVSLeftoverFindings(f)
	var kinds []string
	all := ""
	for _, x := range findings {
		kinds = append(kinds, x.Kind)
		all += x.Message + "\n"
		if x.Fix == "" {
			t.Errorf("%s without a fix", x.Kind)
		}
	}
	if got := strings.Join(kinds, ","); got != "ipvs-leftover-ipsets,ipvs-leftover-link,ipvs-leftover-virtual-servers" {
		t.Errorf("kinds %s", got)
	}
	for _, want := range []string{"KUBE-CLUSTER-IP", "KUBE-NODE-PORT-UDP (referenced by 1 rule(s)", "answers ARP", "203.0.113.7", "TCP 10.43.0.1:443"} {
		if !strings.Contains(all, want) {
			t.Errorf("findings do not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "KUBE-DST-ABC") || strings.Contains(all, "198.51.100.1") {
		t.Errorf("findings name another owner's object:\n%s", all)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "1 IPVS virtual server(s) stay") {
		t.Errorf("notes %q", notes)
	}

	// Nothing read is not "nothing there": the failures are notes, and
	// no finding is made up.
	findings, notes = IPVSLeftoverFindings(ipvs.Footprint{SetsErr: errors.New("boom"), Services: ipvs.Services{Absent: ipvs.NotInKernel}})
	if len(findings) != 0 || !strings.Contains(strings.Join(notes, "\n"), "ipsets not read: boom") || !strings.Contains(strings.Join(notes, "\n"), ipvs.NotInKernel) {
		t.Errorf("findings %+v, notes %q", findings, notes)
	}
}

// On ipvs nodes the state is kube-proxy's live footprint, never leftovers;
// on a fixture root the namespace's kernel state is not the root's.
func TestAddIPVSLeftoversSkips(t *testing.T) {
	read := func() ipvs.Footprint {
		t.Error("the footprint was read on a node where it is no leftover")
		return ipvs.Footprint{}
	}
	for _, c := range []struct {
		name             string
		opts             Options
		kubeProxyReports string
	}{
		{"kube-proxy reports ipvs", Options{IPVS: read}, "ipvs"},
		{"the plan keeps ipvs", Options{IPVS: read, ProxyMode: ProxyModeIPVS}, "iptables"},
		{"fixture root (no reader)", Options{}, "iptables"},
	} {
		res := &Result{Expect: "nftables", ProxyMode: c.kubeProxyReports, Verdict: VerdictOK, OK: true}
		AddIPVSLeftovers(c.opts, res)
		if len(res.Findings) != 0 || len(res.Notes) != 0 || !res.OK {
			t.Errorf("%s: %+v", c.name, res)
		}
	}
}
