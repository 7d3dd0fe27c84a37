package ipvs

import (
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"golang.org/x/sys/unix"
)

// The reader finds a link named kube-ipvs0 with its kind and every
// address on it. kube-proxy makes a dummy link; a kernel without dummy
// links (this one) gets a veth or a bridge of that name, and the test says
// which kind it used.
func TestReadLinkInNetns(t *testing.T) {
	if !nstest.Setup(t, "", "ip") {
		return
	}
	if _, found, err := ReadLink("kube-ipvs0"); err != nil || found {
		t.Fatalf("before the link exists: found %v, %v", found, err)
	}
	kind := ""
	for _, k := range []string{"dummy", "veth", "bridge"} {
		args := []string{"link", "add", "kube-ipvs0", "type", k}
		if k == "veth" {
			args = append(args, "peer", "name", "kube-ipvs0-peer")
		}
		if exec.Command("ip", args...).Run() == nil {
			kind = k
			break
		}
	}
	if kind == "" {
		t.Fatal("this kernel can make no dummy, veth or bridge link")
	}
	t.Logf("kube-ipvs0 made as a %s link", kind)
	nstest.Sh(t, "ip addr add 10.43.0.1/32 dev kube-ipvs0; ip addr add 10.43.0.10/32 dev kube-ipvs0; ip addr add 192.0.2.50/32 dev kube-ipvs0; ip -6 addr add fd00::1/128 dev kube-ipvs0 nodad; ip addr add 10.9.9.9/32 dev lo")
	l, found, err := ReadLink("kube-ipvs0")
	if err != nil || !found {
		t.Fatalf("ReadLink: found %v, %v", found, err)
	}
	if l.Name != "kube-ipvs0" || l.Kind != kind || l.Index <= 0 {
		t.Errorf("link %+v, want kube-ipvs0 of kind %s", l, kind)
	}
	var want []netip.Addr
	for _, a := range []string{"10.43.0.1", "10.43.0.10", "192.0.2.50", "fd00::1"} {
		want = append(want, netip.MustParseAddr(a))
	}
	// A veth's or bridge's IPv6 link-local address may come too: keep
	// the ones the test put there, then check nothing else but fe80::.
	var got []netip.Addr
	for _, a := range l.Addrs {
		if a.IsLinkLocalUnicast() {
			continue
		}
		got = append(got, a)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v, want %v (lo's 10.9.9.9 must not count)", l.Addrs, want)
	}

	// The sweep's delete goes by index: a stale one touches nothing.
	if err := DeleteLink(Link{Name: l.Name, Index: l.Index + 1000}); err == nil {
		t.Error("deleting by an index no link has: no error")
	}
	if err := DeleteLink(l); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ReadLink("kube-ipvs0"); err != nil || found {
		t.Errorf("after DeleteLink: found %v, %v", found, err)
	}
}

// On this kernel (no ip_vs) the reader states the fact; on one with IPVS a
// fresh namespace has no virtual server.
func TestReadServicesInNetns(t *testing.T) {
	if !nstest.Setup(t, "") {
		return
	}
	// The family dump finds families this kernel has: the controller's own.
	c, err := nlsock.Dial(unix.NETLINK_GENERIC)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id, found, err := familyID(c, "nlctrl"); err != nil || !found || id != unix.GENL_ID_CTRL {
		t.Fatalf("familyID(nlctrl) = %d, %v, %v; want %d", id, found, err, unix.GENL_ID_CTRL)
	}
	s, err := ReadServices()
	if err != nil {
		t.Fatal(err)
	}
	// The kernel's other interface says whether IPVS is here: ip_vs
	// makes /proc/net/ip_vs in every namespace.
	_, procErr := os.Stat("/proc/net/ip_vs")
	switch inKernel := procErr == nil; {
	case !s.Present && s.Absent == NotInKernel && !inKernel:
		t.Logf("%s (no /proc/net/ip_vs either): live IPVS reading is not exercised here", NotInKernel)
	case s.Present && len(s.List) == 0 && inKernel:
		t.Log("IPVS is in this kernel: a fresh namespace has no virtual server")
	default:
		t.Errorf("ReadServices = %+v, but /proc/net/ip_vs: %v", s, procErr)
	}
}
