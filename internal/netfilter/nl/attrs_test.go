package nl

import (
	"bytes"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// FuzzFields: for any bytes, fields is the list Attrs decodes read by
// type: the same error, and for each type below 16 the data of its last
// attribute (nil when it has none), the very bytes Attrs points at.
// Attributes mdlayher/netlink marshals (the fuzz input's types and
// values) read back to their values.
func FuzzFields(f *testing.F) {
	f.Add([]byte{8, 0, 1, 0, 'a', 'b', 'c', 0, 5, 0, 0x81, 0x80, 7}, uint16(3), []byte("x"))
	f.Add([]byte{4, 0, 2, 0, 3, 0}, uint16(15), []byte{})
	f.Fuzz(func(t *testing.T, raw []byte, typ uint16, value []byte) {
		var got fields
		err := got.parse(raw)
		as, aerr := Attrs(raw)
		if (err == nil) != (aerr == nil) || err != nil && err.Error() != aerr.Error() {
			t.Fatalf("fields error %v, Attrs error %v", err, aerr)
		}
		var want fields
		for _, a := range as {
			if int(a.Type) < len(want) {
				want[a.Type] = a.Data
			}
		}
		for i := range got {
			if (got[i] == nil) != (want[i] == nil) || !bytes.Equal(got[i], want[i]) || len(got[i]) > 0 && &got[i][0] != &want[i][0] {
				t.Fatalf("type %d: fields %x, Attrs %x", i, got[i], want[i])
			}
		}
		typ &= attrTypeMask
		if len(value) > 0xfff0 {
			return
		}
		b, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: 1, Data: []byte("first")}, {Type: typ, Data: value}})
		if err != nil {
			return
		}
		back := fieldsOf(b)
		if int(typ) < len(back) && !bytes.Equal(back[typ], value) || typ != 1 && string(back[1]) != "first" {
			t.Fatalf("marshalled type %d value %x read back as %x (type 1 %q)", typ, value, back[min(int(typ), len(back)-1)], back[1])
		}
	})
}

// DataValue answers an NFTA_DATA nest's first value, in place, as it did
// when it walked Attrs: nil without one, empty but non-nil when it has no
// data, and the value still when a malformed attribute follows it.
func TestDataValue(t *testing.T) {
	enc := func(as ...netlink.Attribute) []byte {
		b, err := netlink.MarshalAttributes(as)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	verdict := netlink.Attribute{Type: unix.NFTA_DATA_VERDICT, Data: []byte{1, 2, 3, 4}}
	for name, c := range map[string]struct {
		b    []byte
		want []byte
	}{
		"absent": {enc(verdict), nil},
		"empty":  {enc(verdict, netlink.Attribute{Type: unix.NFTA_DATA_VALUE}), []byte{}},
		"first of two": {enc(netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte("one")},
			netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte("two")}), []byte("one")},
		"malformed after": {append(enc(netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte("v")}), 99, 0, 1, 0), []byte("v")},
	} {
		got := DataValue(c.b)
		if (got == nil) != (c.want == nil) || !bytes.Equal(got, c.want) {
			t.Errorf("%s: DataValue = %q, want %q", name, got, c.want)
		}
	}
}
