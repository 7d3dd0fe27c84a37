package nlsock

import (
	"bytes"
	"syscall"
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

// Property: nextMessage splits any bytes into the messages
// syscall.ParseNetlinkMessage finds, with the same headers and data, and
// fails where it fails.
func FuzzNextMessage(f *testing.F) {
	f.Add([]byte{20, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0})
	f.Add([]byte{17, 0, 0, 0, 16, 10, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{15, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := syscall.ParseNetlinkMessage(raw)
		var got []syscall.NetlinkMessage
		var err error
		for b := raw; len(b) >= syscall.NLMSG_HDRLEN; {
			var h header
			var data []byte
			if h, data, b, err = nextMessage(b); err != nil {
				break
			}
			got = append(got, syscall.NetlinkMessage{Header: syscall.NlMsghdr{Len: uint32(syscall.NLMSG_HDRLEN + len(data)), Type: h.Type, Flags: h.Flags, Seq: h.Seq}, Data: data})
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("nextMessage: error %v, syscall.ParseNetlinkMessage: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("nextMessage found %d messages, syscall.ParseNetlinkMessage %d", len(got), len(want))
		}
		for i := range want {
			w := want[i].Header
			w.Pid = 0 // not read
			if got[i].Header != w || !bytes.Equal(got[i].Data, want[i].Data) {
				t.Fatalf("message %d: %+v %x, syscall.ParseNetlinkMessage %+v %x", i, got[i].Header, got[i].Data, w, want[i].Data)
			}
		}
	})
}
