package ipvs

import (
	"encoding/binary"
	"net/netip"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// Bytes laid out by hand per include/uapi/linux/ip_vs.h, as
// ip_vs_genl_fill_service writes them (native-endian u16/u32, __be16
// port, a 16-byte nf_inet_addr): the decoder reads them without relying
// on EncodeService.
func TestDecodeServiceFromUapiBytes(t *testing.T) {
	le := func(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }
	attr := func(typ uint16, v []byte) []byte {
		l := 4 + len(v)
		b := append(le(uint16(l)), le(typ)...)
		b = append(b, v...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	var n []byte
	n = append(n, attr(1, le(unix.AF_INET))...)                                         // AF
	n = append(n, attr(2, le(unix.IPPROTO_TCP))...)                                     // PROTOCOL
	n = append(n, attr(3, []byte{10, 43, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})...) // ADDR
	n = append(n, attr(4, []byte{0x01, 0xbb})...)                                       // PORT 443, big-endian
	n = append(n, attr(6, []byte("rr\x00"))...)                                         // SCHED_NAME
	n = append(n, attr(7, make([]byte, 8))...)                                          // FLAGS (ignored)
	msg := append([]byte{1, 1, 0, 0}, attr(1|unix.NLA_F_NESTED, n)...)
	got, err := DecodeService(msg)
	want := Service{Addr: netip.MustParseAddr("10.43.0.1"), Protocol: unix.IPPROTO_TCP, Port: 443, Sched: "rr"}
	if err != nil || got != want {
		t.Fatalf("DecodeService = %+v, %v; want %+v", got, err, want)
	}
	if got.String() != "TCP 10.43.0.1:443" {
		t.Errorf("String() = %q", got.String())
	}
}

func TestDecodeServiceRejectsPartial(t *testing.T) {
	for name, msg := range map[string][]byte{
		"short":      {1},
		"dest reply": {5, 1, 0, 0},
		"no service": {1, 1, 0, 0},
		"cut":        EncodeService(Service{Addr: netip.MustParseAddr("10.0.0.1"), Protocol: 6, Port: 80})[:13],
	} {
		if s, err := DecodeService(msg); err == nil {
			t.Errorf("%s: %+v, want an error", name, s)
		}
	}
}

// Property: a service the kernel could send decodes back to itself; any
// bytes decode to an error or to a service with an address or a mark.
func FuzzDecodeService(f *testing.F) {
	f.Add([]byte{10, 43, 0, 1}, uint16(6), uint16(443), uint32(0), "rr", []byte{})
	f.Add([]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, uint16(17), uint16(53), uint32(0), "sh", []byte{1, 1, 0, 0})
	f.Add([]byte{}, uint16(0), uint16(0), uint32(7), "wrr", EncodeService(Service{Fwmark: 3}))
	f.Fuzz(func(t *testing.T, ip []byte, proto, port uint16, mark uint32, sched string, raw []byte) {
		want := Service{Protocol: proto, Port: port, Fwmark: mark, Sched: sched}
		if a, ok := netip.AddrFromSlice(ip); ok && !a.Is4In6() {
			want.Addr = a
		}
		if mark != 0 {
			want.Addr, want.Protocol, want.Port = netip.Addr{}, 0, 0
		}
		if (want.Addr.IsValid() || mark != 0) && validSched(sched) {
			got, err := DecodeService(EncodeService(want))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("DecodeService(EncodeService(%+v)) = %+v, %v", want, got, err)
			}
		}
		if s, err := DecodeService(raw); err == nil && !s.Addr.IsValid() && s.Fwmark == 0 {
			t.Fatalf("DecodeService(%x) = %+v: neither address nor mark", raw, s)
		}
	})
}

func validSched(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return len(s) < 1000
}
