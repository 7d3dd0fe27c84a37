package nl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
)

// The attribute layer every decoder of this package reads through: Attrs
// (a list), eachAttr (a walk), fields (a structure read by type) and the
// value readers (Str, BE32, udata).

// fields is one level of netlink attributes read by type: f[t] is the
// data of the attribute of type t, in place (nil when absent, non-nil but
// empty when present without data). Each decoder names its fields once
// from it instead of walking the attributes in a switch of its own. A type
// that comes twice keeps the last, as those switches did (the kernel sends
// each once). No structure this reader decodes has a field of type 16 or
// above (the highest it reads is NFTA_SET_USERDATA, 13), so those are
// skipped, as the switches skipped them. It lives on the stack: reading a
// message costs no allocation.
type fields [16][]byte

// parse reads b's attributes into f. On a malformed attribute f keeps
// those before it and the error is Attrs's.
func (f *fields) parse(b []byte) error {
	return eachAttr(b, func(typ uint16, data []byte) error {
		if int(typ) < len(f) {
			f[typ] = data
		}
		return nil
	})
}

// fieldsOf is parse for a nested attribute whose malformed tail is
// dropped: decoders keep what they could read.
func fieldsOf(b []byte) (f fields) {
	_ = f.parse(b)
	return f
}

// message strips the nfgenmsg header every nftables message starts with
// and reads the attributes after it. On an error the fields read before it
// are still returned.
func message(m netlink.Message) (family byte, f fields, err error) {
	if len(m.Data) < 4 {
		return 0, f, errors.New("short nftables message")
	}
	err = f.parse(m.Data[4:])
	return m.Data[0], f, err
}

// Attrs decodes one level of netlink attributes without copying: Data
// points into b, so whatever outlives the message is copied by the caller
// (Str, bytes.Clone). netlink.UnmarshalAttributes copies every attribute,
// which dominated a large read.
func Attrs(b []byte) ([]netlink.Attribute, error) {
	as := make([]netlink.Attribute, 0, 8)
	err := eachAttr(b, func(typ uint16, data []byte) error {
		as = append(as, netlink.Attribute{Type: typ, Data: data})
		return nil
	})
	return as, err
}

// Str is a NUL-terminated (or unterminated) netlink string, copied.
func Str(b []byte) string {
	return string(cstr(b))
}

func BE32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func be64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// cstr is Str without the copy.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// udataBytes returns a TLV value of userdata (libnftnl's format: type,
// length, value) up to its NUL, in place; nil when typ is absent or the
// input is truncated before it.
func udataBytes(b []byte, typ byte) []byte {
	for len(b) >= 2 {
		t, n := b[0], int(b[1])
		if len(b) < 2+n {
			return nil
		}
		if t == typ {
			return cstr(b[2 : 2+n])
		}
		b = b[2+n:]
	}
	return nil
}

// udata is udataBytes copied into a string ("" when typ is absent).
func udata(b []byte, typ byte) string {
	return string(udataBytes(b, typ))
}

// eachAttr calls fn with each netlink attribute of b (type without the
// nested and byte-order flags, data in place), as Attrs decodes them.
func eachAttr(b []byte, fn func(typ uint16, data []byte) error) error {
	for len(b) >= 4 {
		n := int(binary.NativeEndian.Uint16(b))
		if n < 4 || n > len(b) {
			return fmt.Errorf("netlink attribute of length %d in %d bytes", n, len(b))
		}
		if err := fn(binary.NativeEndian.Uint16(b[2:])&attrTypeMask, b[4:n:n]); err != nil {
			return err
		}
		b = b[min(len(b), (n+3)&^3):]
	}
	return nil
}
