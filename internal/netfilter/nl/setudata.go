package nl

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Set user data (NFTA_SET_USERDATA) is libnftnl's TLV list that nft writes
// next to a set: the key's byte order, typeof expressions, a comment. An
// nft older than the one that wrote a set may crash decoding it
// (kubernetes#136786), so which sets carry it, in whose table, is worth
// knowing before kube-proxy's image nft meets them. Read-only: one GETSET
// dump over every family.

// SetUserdata names one set and the user data records it carries.
type SetUserdata struct {
	Family      byte
	Table, Name string
	// Kinds are the records' names in the order stored (UdataKind).
	Kinds []string
}

// udataKinds are libnftnl's NFTNL_UDATA_SET_* record types (udata.h).
var udataKinds = []string{"key-byteorder", "data-byteorder", "merge-elements", "key-typeof", "data-typeof", "expr", "data-interval", "comment"}

// UdataKind names a set user data record type; unknown ones (a newer nft's)
// are "type-N".
func UdataKind(t byte) string {
	if int(t) < len(udataKinds) {
		return udataKinds[t]
	}
	return fmt.Sprintf("type-%d", t)
}

// UdataKinds lists the record types of a set's user data. A record whose
// length runs past the end is an error: the kinds before it are returned.
func UdataKinds(b []byte) ([]string, error) {
	var kinds []string
	for len(b) > 0 {
		if len(b) < 2 {
			return kinds, fmt.Errorf("set user data: %d byte(s) left, a record needs 2", len(b))
		}
		t, n := b[0], int(b[1])
		if len(b) < 2+n {
			return kinds, fmt.Errorf("set user data: record %s of %d bytes in %d", UdataKind(t), n, len(b)-2)
		}
		kinds = append(kinds, UdataKind(t))
		b = b[2+n:]
	}
	return kinds, nil
}

// DecodeSetUserdata reads a NEWSET message's family, table, name and user
// data kinds; has is false when the set carries no user data. User data
// that does not parse ends its kinds with "unparsable"; err is only for a
// message that does not decode.
func DecodeSetUserdata(m netlink.Message) (s SetUserdata, has bool, err error) {
	fam, f, err := message(m)
	s = SetUserdata{Family: fam, Table: Str(f[unix.NFTA_SET_TABLE]), Name: Str(f[unix.NFTA_SET_NAME])}
	if ud := f[attrSetUserdata]; ud != nil {
		has = true
		kinds, kerr := UdataKinds(ud)
		if kerr != nil {
			// Still a set with user data, just one this reader cannot
			// walk: exactly what an older nft may trip on.
			kinds = append(kinds, "unparsable")
		}
		s.Kinds = kinds
	}
	return s, has, err
}

// DumpSetUserdata lists every set of every family that carries user data,
// at most max of them (more is an error naming the bound: the caller
// reports it rather than acting on half a list).
func (c *Conn) DumpSetUserdata(max int) ([]SetUserdata, error) {
	var out []SetUserdata
	err := c.Execute(unix.NFT_MSG_GETSET, netlink.Dump, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		s, has, err := DecodeSetUserdata(m)
		if err != nil {
			return fmt.Errorf("set %s in table %s: %w", s.Name, s.Table, err)
		}
		if !has {
			return nil
		}
		if len(out) == max {
			return fmt.Errorf("more than %d sets carry user data", max)
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// FamilyName is nft's word for a netfilter family.
func FamilyName(f byte) string {
	switch f {
	case unix.NFPROTO_INET:
		return "inet"
	case unix.NFPROTO_IPV4:
		return "ip"
	case unix.NFPROTO_ARP:
		return "arp"
	case unix.NFPROTO_NETDEV:
		return "netdev"
	case unix.NFPROTO_BRIDGE:
		return "bridge"
	case unix.NFPROTO_IPV6:
		return "ip6"
	}
	return fmt.Sprintf("family-%d", f)
}
