package ipvs

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// linkMsg lays out an RTM_NEWLINK message as rtnetlink sends it
// (ifinfomsg, IFLA_IFNAME, IFLA_LINKINFO nesting IFLA_INFO_KIND).
func linkMsg(index int32, name, kind string) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(b[4:], uint32(index))
	b = nlsock.AppendAttr(b, unix.IFLA_MTU, binary.NativeEndian.AppendUint32(nil, 1500))
	b = nlsock.AppendAttr(b, unix.IFLA_IFNAME, append([]byte(name), 0))
	if kind != "" {
		b = nlsock.AppendAttr(b, unix.IFLA_LINKINFO|unix.NLA_F_NESTED, nlsock.AppendAttr(nil, unix.IFLA_INFO_KIND, append([]byte(kind), 0)))
	}
	return b
}

// addrMsg lays out an RTM_NEWADDR message (ifaddrmsg, IFA_ADDRESS, and
// IFA_LOCAL for IPv4 as the kernel sends it).
func addrMsg(index int32, a netip.Addr) []byte {
	b := make([]byte, unix.SizeofIfAddrmsg)
	binary.NativeEndian.PutUint32(b[4:], uint32(index))
	b = nlsock.AppendAttr(b, unix.IFA_ADDRESS, a.AsSlice())
	if a.Is4() {
		b = nlsock.AppendAttr(b, unix.IFA_LOCAL, a.AsSlice())
	}
	return b
}

// Property: a link or an address message rtnetlink could send decodes to
// what it holds; any bytes decode to an error or to a link with a name,
// never a panic.
func FuzzDecodeLinkAndAddr(f *testing.F) {
	f.Add(int32(4), "kube-ipvs0", "dummy", []byte{10, 43, 0, 1}, []byte{})
	f.Add(int32(9), "eth0", "", []byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, linkMsg(3, "x", "veth"))
	f.Fuzz(func(t *testing.T, index int32, name, kind string, ip []byte, raw []byte) {
		if name != "" && validSched(name) && validSched(kind) {
			l, err := DecodeLink(linkMsg(index, name, kind))
			if err != nil || l.Name != name || l.Kind != kind || l.Index != index {
				t.Fatalf("DecodeLink(%d %q %q) = %+v, %v", index, name, kind, l, err)
			}
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			idx, got, ok, err := DecodeAddr(addrMsg(index, a))
			if err != nil || !ok || idx != index || got != a {
				t.Fatalf("DecodeAddr(%d %s) = %d %s %v %v", index, a, idx, got, ok, err)
			}
		}
		if l, err := DecodeLink(raw); err == nil && l.Name == "" {
			t.Fatalf("DecodeLink(%x) = %+v: a link without a name", raw, l)
		}
		DecodeAddr(raw)
	})
}
