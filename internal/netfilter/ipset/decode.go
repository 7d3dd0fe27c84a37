package ipset

import (
	"encoding/binary"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// Decode reads one IPSET_CMD_LIST reply (the nfgenmsg and its
// attributes) of a header-only listing. A message without a name or a
// type is an error: a partial set is never returned.
func Decode(data []byte) (Set, error) {
	if len(data) < 4 {
		return Set{}, fmt.Errorf("ipset message of %d bytes: shorter than its nfgenmsg header", len(data))
	}
	attrs, err := nlsock.ParseAttrs(data[4:])
	if err != nil {
		return Set{}, fmt.Errorf("ipset message: %w", err)
	}
	var s Set
	for _, a := range attrs {
		switch a.Type {
		case attrSetname:
			s.Name = nlsock.CString(a.Value)
		case attrTypename:
			s.Type = nlsock.CString(a.Value)
		case attrRevision:
			if len(a.Value) < 1 {
				return Set{}, fmt.Errorf("ipset %q: empty revision attribute", s.Name)
			}
			s.Revision = a.Value[0]
		case attrFamily:
			if len(a.Value) < 1 {
				return Set{}, fmt.Errorf("ipset %q: empty family attribute", s.Name)
			}
			s.Family = familyName(a.Value[0])
		case attrData:
			if err := decodeData(&s, a.Value); err != nil {
				return Set{}, fmt.Errorf("ipset %q: %w", s.Name, err)
			}
		}
	}
	if s.Name == "" || s.Type == "" {
		return Set{}, fmt.Errorf("ipset message without a name or a type (name %q, type %q)", s.Name, s.Type)
	}
	return s, nil
}

func decodeData(s *Set, b []byte) error {
	attrs, err := nlsock.ParseAttrs(b)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		var dst *uint32
		switch a.Type {
		case attrElements:
			dst = &s.Entries
		case attrReferences:
			dst = &s.References
		case attrMemsize:
			dst = &s.MemSize
		default:
			continue
		}
		if len(a.Value) != 4 {
			return fmt.Errorf("header attribute %d of %d bytes, want 4", a.Type, len(a.Value))
		}
		*dst = binary.BigEndian.Uint32(a.Value)
	}
	return nil
}

func familyName(f byte) string {
	switch f {
	case unix.NFPROTO_IPV4:
		return "inet"
	case unix.NFPROTO_IPV6:
		return "inet6"
	}
	return ""
}

func familyNumber(name string) byte {
	switch name {
	case "inet":
		return unix.NFPROTO_IPV4
	case "inet6":
		return unix.NFPROTO_IPV6
	}
	return unix.NFPROTO_UNSPEC
}

// Encode builds the message the kernel would send for s: the inverse of
// Decode, for its fuzz property and the unit tests.
func Encode(s Set) []byte {
	b := nfgen()
	b = nlsock.AppendAttr(b, attrProtocol, []byte{protocol})
	b = nlsock.AppendAttr(b, attrSetname, append([]byte(s.Name), 0))
	b = nlsock.AppendAttr(b, attrTypename, append([]byte(s.Type), 0))
	b = nlsock.AppendAttr(b, attrRevision, []byte{s.Revision})
	b = nlsock.AppendAttr(b, attrFamily, []byte{familyNumber(s.Family)})
	var d []byte
	d = nlsock.AppendAttr(d, attrElements|unix.NLA_F_NET_BYTEORDER, binary.BigEndian.AppendUint32(nil, s.Entries))
	d = nlsock.AppendAttr(d, attrReferences|unix.NLA_F_NET_BYTEORDER, binary.BigEndian.AppendUint32(nil, s.References))
	d = nlsock.AppendAttr(d, attrMemsize|unix.NLA_F_NET_BYTEORDER, binary.BigEndian.AppendUint32(nil, s.MemSize))
	return nlsock.AppendAttr(b, attrData|unix.NLA_F_NESTED, d)
}
