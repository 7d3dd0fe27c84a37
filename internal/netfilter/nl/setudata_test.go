package nl

import (
	"slices"
	"testing"
)

func TestUdataKinds(t *testing.T) {
	// nft 1.0.6's user data for `typeof meta iifname; comment "x"`:
	// key byte order (u32), key typeof (nested), comment (strz).
	b := []byte{0, 4, 1, 0, 0, 0, 3, 3, 9, 9, 9, 7, 2, 'x', 0}
	kinds, err := UdataKinds(b)
	if err != nil || !slices.Equal(kinds, []string{"key-byteorder", "key-typeof", "comment"}) {
		t.Fatalf("kinds %v, %v", kinds, err)
	}
	if kinds, err := UdataKinds([]byte{0, 4, 1, 0, 0, 0, 9, 8, 1}); err == nil || !slices.Equal(kinds, []string{"key-byteorder"}) {
		t.Errorf("truncated record: kinds %v, err %v", kinds, err)
	}
	if UdataKind(12) != "type-12" {
		t.Errorf("unknown kind is %q", UdataKind(12))
	}
}

// FuzzUdataKinds: records built from the fuzz input decode to their own
// types, in order, and any input yields at most one kind per two bytes.
func FuzzUdataKinds(f *testing.F) {
	f.Add([]byte{0, 4, 1, 0, 0, 0, 7, 2, 'x', 0}, []byte{0, 3, 7})
	f.Fuzz(func(t *testing.T, raw, types []byte) {
		kinds, _ := UdataKinds(raw)
		if len(kinds) > len(raw)/2 {
			t.Fatalf("%d kinds from %d bytes", len(kinds), len(raw))
		}
		var b []byte
		var want []string
		for i, typ := range types {
			n := i % 5
			b = append(b, typ, byte(n))
			b = append(b, make([]byte, n)...)
			want = append(want, UdataKind(typ))
		}
		got, err := UdataKinds(b)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("built %v: got %v, %v", want, got, err)
		}
	})
}
