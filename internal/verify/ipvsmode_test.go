package verify

import (
	"errors"
	"io/fs"
	"net/netip"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"golang.org/x/sys/unix"
)

// What a kernel without IPVS cannot show (virtual servers, the vs
// sysctls) is a note naming it, never a finding; what it can show and is
// wrong is a finding naming the object.
func TestIPVSModeFindings(t *testing.T) {
	addr := netip.MustParseAddr("10.43.0.10")
	healthy := func() ipvs.Footprint {
		f := ipvs.Footprint{LinkFound: true, Link: ipvs.Link{Name: "kube-ipvs0", Kind: "dummy", Addrs: []netip.Addr{addr}},
			Services:  ipvs.Services{Present: true, List: []ipvs.Service{{Addr: addr, Port: 80, Protocol: unix.IPPROTO_TCP}}},
			Conntrack: "1"}
		for _, n := range expected.IPVSSets(rules.IPv4) {
			f.Sets = append(f.Sets, ipset.Set{Name: n})
			if n == "KUBE-IPVS-IPS" {
				f.Sets[len(f.Sets)-1].Entries = 1 // 10.43.0.10, on kube-ipvs0
			}
		}
		return f
	}
	noIPVS := healthy()
	noIPVS.Services, noIPVS.Conntrack, noIPVS.ConntrackErr = ipvs.Services{Absent: ipvs.NotInKernel}, "", &fs.PathError{Op: "open", Path: "/proc/sys/net/ipv4/vs/conntrack", Err: fs.ErrNotExist}
	noSet, noLink, bare, off := healthy(), healthy(), healthy(), healthy()
	noSet.Sets = noSet.Sets[1:]
	noLink.LinkFound = false
	bare.Services.List = nil
	off.Conntrack = "0"
	unbound := healthy()
	unbound.Link.Addrs = append(unbound.Link.Addrs, netip.MustParseAddr("10.43.0.11"))
	unbound.Services.List = append(unbound.Services.List, ipvs.Service{Addr: netip.MustParseAddr("10.43.0.11"), Port: 80, Protocol: unix.IPPROTO_TCP})
	unreadable := healthy()
	unreadable.SetsErr = errors.New("boom")
	for _, c := range []struct {
		name       string
		f          ipvs.Footprint
		kind, says string
		note       string
	}{
		{"healthy", healthy(), "", "", ""},
		{"no IPVS in the kernel", noIPVS, "", "", "net.ipv4.vs.conntrack not checked (no /proc/sys/net/ipv4/vs): " + ipvs.NotInKernel},
		{"a set missing", noSet, KindIPVSMissingSets, expected.IPVSSets(rules.IPv4)[0], ""},
		{"no kube-ipvs0", noLink, KindIPVSMissingLink, "kube-ipvs0 is absent", ""},
		{"an address without a virtual server", bare, KindIPVSMissingServices, "10.43.0.10", ""},
		{"conntrack off", off, KindIPVSSysctl, "net.ipv4.vs.conntrack is 0", ""},
		{"KUBE-IPVS-IPS out of step with kube-ipvs0", unbound, KindIPVSMissingSets, "ipset KUBE-IPVS-IPS holds 1 address(es), but 2 ipv4 address(es) are on kube-ipvs0", ""},
		{"sets unreadable", unreadable, "", "", "ipsets not checked: boom"},
	} {
		findings, notes := group{}.ipvsModeFindings(c.f, []rules.Family{rules.IPv4})
		if c.kind == "" && len(findings) != 0 || c.kind != "" && (len(findings) != 1 || findings[0].Kind != c.kind || !strings.Contains(findings[0].Message, c.says)) {
			t.Errorf("%s: findings %+v, want one %q naming %q", c.name, findings, c.kind, c.says)
		}
		if got := strings.Join(notes, "\n"); c.note == "" && got != "" || !strings.Contains(got, c.note) {
			t.Errorf("%s: notes %q, want %q", c.name, got, c.note)
		}
	}
}

// Run says the proxy mode it judged beside the backend: ipvs when the
// plan keeps it, the backend's own mode otherwise (status.json and the
// textfile carry it: internal/proof's test).
func TestModeBesideBackend(t *testing.T) {
	fake := newFake(t, skeleton(t, backend.IptablesNFT, rke2.KubeVersion{}, 0))
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Expect: backend.IptablesNFT, Reader: fake}, "iptables"},
		{Options{Expect: backend.IptablesNFT, Reader: fake, ProxyMode: ProxyModeIPVS}, "ipvs"},
		{Options{Expect: backend.NFTables, Reader: fake}, "nftables"},
	} {
		if res := run(t, c.opts); res.Mode != c.want {
			t.Errorf("%s, plan mode %q: Mode %q, want %q", c.opts.Expect, c.opts.ProxyMode, res.Mode, c.want)
		}
	}
}
