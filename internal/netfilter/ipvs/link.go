// Package ipvs reads the parts of kube-proxy's ipvs footprint that are not
// netfilter rules or ipsets: the kube-ipvs0 link with the Service IPs on it
// (rtnetlink) and the IPVS virtual servers (the "IPVS" generic netlink
// family, include/uapi/linux/ip_vs.h). Reads are bounded (nlsock) and have
// no side effects; the few writes (writes.go) are for the leftover sweep
// in internal/cleanup, which decides what goes (Classify).
package ipvs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// MaxAddrs bounds an address dump: kube-ipvs0 holds one address per
// Service IP, and the largest clusters have tens of thousands.
const MaxAddrs = 1 << 20

// Link is one network link by name.
type Link struct {
	Name  string
	Index int32
	// Kind is the rtnetlink link kind ("dummy" for kube-proxy's link,
	// "veth", "bridge", ...); empty for a link without one (loopback,
	// physical devices).
	Kind  string
	Addrs []netip.Addr
}

// ReadLink reads the link name and its addresses in the caller's network
// namespace; found is false when there is no such link.
func ReadLink(name string) (l Link, found bool, err error) {
	c, err := nlsock.Dial(unix.NETLINK_ROUTE)
	if err != nil {
		return Link{}, false, err
	}
	defer c.Close()
	req := make([]byte, unix.SizeofIfInfomsg)
	req = nlsock.AppendAttr(req, unix.IFLA_IFNAME, append([]byte(name), 0))
	err = c.Request(unix.RTM_GETLINK, 0, req, 1, func(_ uint16, data []byte) error {
		var derr error
		l, derr = DecodeLink(data)
		return derr
	})
	if errors.Is(err, unix.ENODEV) {
		return Link{}, false, nil
	}
	if err != nil {
		return Link{}, false, fmt.Errorf("reading link %s: %w", name, err)
	}
	addrReq := make([]byte, unix.SizeofIfAddrmsg)
	err = c.Request(unix.RTM_GETADDR, unix.NLM_F_DUMP, addrReq, MaxAddrs, func(_ uint16, data []byte) error {
		idx, a, ok, derr := DecodeAddr(data)
		if derr != nil {
			return derr
		}
		if ok && idx == l.Index {
			l.Addrs = append(l.Addrs, a)
		}
		return nil
	})
	if err != nil {
		return Link{}, false, fmt.Errorf("reading the addresses of link %s: %w", name, err)
	}
	sort.Slice(l.Addrs, func(i, j int) bool { return l.Addrs[i].Less(l.Addrs[j]) })
	return l, true, nil
}

// DecodeLink reads an RTM_NEWLINK message: its index, name and kind.
func DecodeLink(data []byte) (Link, error) {
	if len(data) < unix.SizeofIfInfomsg {
		return Link{}, fmt.Errorf("link message of %d bytes: shorter than ifinfomsg", len(data))
	}
	l := Link{Index: int32(binary.NativeEndian.Uint32(data[4:8]))}
	attrs, err := nlsock.ParseAttrs(data[unix.SizeofIfInfomsg:])
	if err != nil {
		return Link{}, fmt.Errorf("link message: %w", err)
	}
	for _, a := range attrs {
		switch a.Type {
		case unix.IFLA_IFNAME:
			l.Name = nlsock.CString(a.Value)
		case unix.IFLA_LINKINFO:
			info, err := nlsock.ParseAttrs(a.Value)
			if err != nil {
				return Link{}, fmt.Errorf("link %s: link info: %w", l.Name, err)
			}
			for _, i := range info {
				if i.Type == unix.IFLA_INFO_KIND {
					l.Kind = nlsock.CString(i.Value)
				}
			}
		}
	}
	if l.Name == "" {
		return Link{}, errors.New("link message without a name")
	}
	return l, nil
}

// DecodeAddr reads an RTM_NEWADDR message: the link index and the
// address (IFA_LOCAL where the kernel sends it, as `ip addr` shows it,
// else IFA_ADDRESS). ok is false for a message without one.
func DecodeAddr(data []byte) (index int32, addr netip.Addr, ok bool, err error) {
	if len(data) < unix.SizeofIfAddrmsg {
		return 0, netip.Addr{}, false, fmt.Errorf("address message of %d bytes: shorter than ifaddrmsg", len(data))
	}
	index = int32(binary.NativeEndian.Uint32(data[4:8]))
	attrs, err := nlsock.ParseAttrs(data[unix.SizeofIfAddrmsg:])
	if err != nil {
		return 0, netip.Addr{}, false, fmt.Errorf("address message: %w", err)
	}
	var local, address []byte
	for _, a := range attrs {
		switch a.Type {
		case unix.IFA_LOCAL:
			local = a.Value
		case unix.IFA_ADDRESS:
			address = a.Value
		}
	}
	if local == nil {
		local = address
	}
	addr, ok = netip.AddrFromSlice(local)
	return index, addr, ok, nil
}
