package nlsock

import (
	"bytes"
	"testing"
)

// Property: attributes appended by AppendAttr parse back to the same
// types and values; any bytes parse to an error or to values that lie
// inside the input.
func FuzzParseAttrs(f *testing.F) {
	f.Add([]byte("KUBE-CLUSTER-IP\x00"), []byte{7}, uint16(2), []byte{8, 0, 1, 0, 0, 0, 0, 1})
	f.Add([]byte{}, []byte{1, 2, 3}, uint16(0x8007), []byte{3, 0})
	f.Fuzz(func(t *testing.T, v1, v2 []byte, typ uint16, raw []byte) {
		if len(v1) < 0xfff0 && len(v2) < 0xfff0 {
			b := AppendAttr(AppendAttr(nil, 2, v1), typ, v2)
			got, err := ParseAttrs(b)
			if err != nil || len(got) != 2 || got[0].Type != 2 || !bytes.Equal(got[0].Value, v1) ||
				got[1].Type != typ&^0xc000 || !bytes.Equal(got[1].Value, v2) {
				t.Fatalf("ParseAttrs(AppendAttr(...)) = %+v, %v", got, err)
			}
		}
		attrs, err := ParseAttrs(raw)
		if err != nil {
			return
		}
		total := 0
		for _, a := range attrs {
			total += 4 + len(a.Value)
		}
		if total > len(raw) {
			t.Fatalf("parsed %d bytes of attributes out of %d", total, len(raw))
		}
	})
}
