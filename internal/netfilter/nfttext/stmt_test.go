package nfttext

import (
	"strings"
	"testing"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// A NAT from a concatenated map result whose port register is not the one
// right after the address is nothing nft can express: it stays a marker.
func TestConcatNATWithoutAdjacentPortIsLoud(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fam         byte
		addr, proto uint32
		want        string
	}{
		{"ipv4 adjacent", unix.NFPROTO_IPV4, 8, 9, "dnat ip to numgen random mod 2 map { }"},
		{"ipv6 adjacent", unix.NFPROTO_IPV6, 1, 2, "dnat ip6 to numgen random mod 2 map { }"},
		{"ipv4 port elsewhere", unix.NFPROTO_IPV4, 8, 11, "UNSUPPORTED["},
		{"ipv6 port inside the address", unix.NFPROTO_IPV6, 1, 9, "UNSUPPORTED["},
		{"no port", unix.NFPROTO_IPV4, 8, 0, "UNSUPPORTED["},
	} {
		d := &nftDecompiler{fam: tc.fam}
		d.set(tc.addr, regVal{text: "numgen random mod 2 map { }", typ: "ipv4_addr . inet_service", size: 8, full: 8, parts: 2})
		d.nat(&expr.NAT{Type: expr.NATTypeDestNAT, RegAddrMin: tc.addr, RegProtoMin: tc.proto})
		if got := strings.Join(d.out, " "); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.name, got, tc.want)
		}
	}
}

func TestConcatText(t *testing.T) {
	const addrPort = 7<<6 | 13 // ipv4_addr . inet_service
	if got := concatText(addrPort, []byte{10, 42, 0, 7, 0x1f, 0x90, 0, 0}); got != "10.42.0.7 . 8080" {
		t.Errorf("concatText = %q", got)
	}
	if got := concatText(addrPort, []byte{10, 42}); !strings.HasPrefix(got, "UNSUPPORTED[") {
		t.Errorf("short value rendered as %q", got)
	}
	if got := concatTypeName(addrPort); got != "ipv4_addr . inet_service" {
		t.Errorf("concatTypeName = %q", got)
	}
}
