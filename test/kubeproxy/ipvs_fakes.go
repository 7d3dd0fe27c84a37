//go:build !kubeproxy_nftables_only

package main

// ipvs mode's parts this machine's kernel cannot give (no ip_vs module, no
// dummy links): kube-proxy's own fakes stand in for exactly those, and
// everything else (iptables through the flavour on PATH, ipset through the
// real ipset command) is real. What the fakes hold after the sync is dumped
// as JSON so a test can compare it with its expected model.

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	"k8s.io/kubernetes/pkg/proxy"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	ipvstest "k8s.io/kubernetes/pkg/proxy/ipvs/testing"
	utilipvstest "k8s.io/kubernetes/pkg/proxy/ipvs/util/testing"
	"k8s.io/kubernetes/pkg/proxy/metaproxier"
)

// ipvsFaked names the faked parts, for the oracle's output and the tests' logs.
const ipvsFaked = "IPVS virtual servers (kube-proxy's fake IPVS), kube-ipvs0 and its addresses (kube-proxy's fake netlink handle), net/ipv4/vs/* sysctls (a map); iptables and ipset are real; the LoadBalancer's source ranges include the node's address, so no rule needs the xt_ipvs match (which needs ip_vs)"

// ipvsFakes are the fakes one oracle run shares between its families, as
// kube-proxy shares one IPVS handle between its IPv4 and IPv6 proxiers.
type ipvsFakes struct {
	ipvs    *utilipvstest.FakeIPVS
	netlink map[v1.IPFamily]*ipvstest.FakeNetlinkHandle
	sysctl  *vsSysctl
}

func newIPVSFakes() *ipvsFakes {
	return &ipvsFakes{
		ipvs:    utilipvstest.NewFake(),
		netlink: map[v1.IPFamily]*ipvstest.FakeNetlinkHandle{},
		sysctl:  &vsSysctl{real: utilsysctl.New(), vs: map[string]int{}},
	}
}

// vsSysctl keeps net/ipv4/vs/* (absent without ip_vs) in a map and passes
// every other sysctl (ip_forward, arp_*) to the real /proc/sys of the netns.
type vsSysctl struct {
	real utilsysctl.Interface
	vs   map[string]int
}

const vsPrefix = "net/ipv4/vs/"

func (s *vsSysctl) GetSysctl(name string) (int, error) {
	if strings.HasPrefix(name, vsPrefix) {
		return s.vs[name], nil
	}
	return s.real.GetSysctl(name)
}

func (s *vsSysctl) SetSysctl(name string, v int) error {
	if strings.HasPrefix(name, vsPrefix) {
		s.vs[name] = v
		return nil
	}
	return s.real.SetSysctl(name, v)
}

// useFakeNetlink gives one family's proxier the fake netlink handle.
// NewProxier sets its netlinkHandle field to the real one, unexported, which
// kube-proxy's own tests set inside the package; from here the field is set
// by reflection, the one place the oracle reaches into the proxier.
func (f *ipvsFakes) useFakeNetlink(p *ipvs.Proxier, fam v1.IPFamily) error {
	h := ipvstest.NewFakeNetlinkHandle(fam == v1.IPv6Protocol)
	field := reflect.ValueOf(p).Elem().FieldByName("netlinkHandle")
	if !field.IsValid() {
		return fmt.Errorf("kube-proxy's ipvs.Proxier has no netlinkHandle field any more: the oracle cannot fake kube-ipvs0")
	}
	reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Set(reflect.ValueOf(h))
	f.netlink[fam] = h
	return nil
}

// perFamilyIPVS builds one ipvs proxier per family with build (the era's
// constructor), gives each the fake netlink handle, and returns the one or,
// dual-stack, kube-proxy's meta-proxier over both: what NewDualStackProxier
// returns, built here from the two so each gets its handle.
func perFamilyIPVS(p proxierParams, build func(f v1.IPFamily) (*ipvs.Proxier, error)) (proxy.Provider, error) {
	var ps []proxy.Provider
	for _, f := range p.families {
		px, err := build(f)
		if err != nil {
			return nil, err
		}
		if err := p.ipvs.useFakeNetlink(px, f); err != nil {
			return nil, err
		}
		ps = append(ps, px)
	}
	if len(ps) == 1 {
		return ps[0], nil
	}
	return metaproxier.NewMetaProxier(ps[0], ps[1]), nil
}

// FakesDump is what the fakes hold after the sync.
type FakesDump struct {
	Faked          string              `json:"faked"`
	VirtualServers []DumpVirtualServer `json:"virtualServers"`
	// KubeIPVS0 are the addresses bound to kube-ipvs0, per family.
	KubeIPVS0 map[string][]string `json:"kubeIPVS0"`
	Sysctls   map[string]int      `json:"sysctls"`
}

// DumpVirtualServer is one IPVS virtual server and its real servers.
type DumpVirtualServer struct {
	Address   string   `json:"address"`
	Protocol  string   `json:"protocol"`
	Port      uint16   `json:"port"`
	Scheduler string   `json:"scheduler"`
	Real      []string `json:"realServers"`
}

func (f *ipvsFakes) dump(path string) error {
	d := FakesDump{Faked: ipvsFaked, VirtualServers: []DumpVirtualServer{}, KubeIPVS0: map[string][]string{}, Sysctls: map[string]int{}}
	for k, vs := range f.ipvs.Services {
		dv := DumpVirtualServer{Address: vs.Address.String(), Protocol: vs.Protocol, Port: vs.Port, Scheduler: vs.Scheduler, Real: []string{}}
		for _, rs := range f.ipvs.Destinations[k] {
			dv.Real = append(dv.Real, rs.String())
		}
		sort.Strings(dv.Real)
		d.VirtualServers = append(d.VirtualServers, dv)
	}
	sort.Slice(d.VirtualServers, func(i, j int) bool {
		a, b := d.VirtualServers[i], d.VirtualServers[j]
		return fmt.Sprint(a.Address, a.Port, a.Protocol) < fmt.Sprint(b.Address, b.Port, b.Protocol)
	})
	for fam, h := range f.netlink {
		addrs, err := h.ListBindAddress("kube-ipvs0")
		if err != nil {
			return fmt.Errorf("listing the fake kube-ipvs0's %s addresses: %w", fam, err)
		}
		sort.Strings(addrs)
		d.KubeIPVS0[string(fam)] = addrs
	}
	for k, v := range f.sysctl.vs {
		d.Sysctls[k] = v
	}
	return writeJSON(path, "the ipvs fakes' dump", d)
}
