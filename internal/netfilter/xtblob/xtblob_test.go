package xtblob

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

func TestXtInfoPrinters(t *testing.T) {
	statistic := make([]byte, 24)
	le.PutUint32(statistic[4:], 0x40000000) // probability 0.5
	recent := make([]byte, 228)
	le.PutUint32(recent, 10800)
	recent[8] = 1 | 32 // --rcheck --reap
	copy(recent[10:], "KUBE-SEP-X")
	copy(recent[212:], []byte{255, 255, 255, 255})
	for _, tc := range []struct {
		x    nl.Xt
		want string
	}{
		{nl.Xt{Name: "statistic", Info: statistic}, " --mode random --probability 0.50000000000"},
		{nl.Xt{Name: "recent", Rev: 1, Info: recent}, " --rcheck --seconds 10800 --reap --name KUBE-SEP-X --mask 255.255.255.255 --rsource"},
		{nl.Xt{Name: "nfacct", Rev: 1, Info: append([]byte("localhost_nps_accepted_pkts"), make([]byte, 13)...)}, " --nfacct-name  localhost_nps_accepted_pkts"},
		{nl.Xt{Name: "hashlimit", Info: []byte{1}}, " UNSUPPORTED[match hashlimit rev 0 info 01]"},
		// struct xt_tcp / xt_udp, native-endian ports: spts, dpts, then
		// (tcp) option, flag mask, flag compare, and the invert flags.
		{nl.Xt{Name: "tcp", Info: ports(0, 0xffff, 30080, 30080, 0, 0, 0, 0)}, " --dport 30080"},
		{nl.Xt{Name: "tcp", Info: ports(1024, 2048, 0, 0xffff, 0, 0, 0, 1)}, " ! --sport 1024:2048"},
		{nl.Xt{Name: "tcp", Info: ports(0, 0xffff, 80, 80, 0, 0x12, 0x02, 0)}, " UNSUPPORTED[tcp options/flags 0000ffff5000500000120200]"},
		{nl.Xt{Name: "udp", Info: ports(0, 0xffff, 53, 53, 2, 0)}, " ! --dport 53"},
		{nl.Xt{Name: "tcp", Info: []byte{0, 0, 255, 255}}, ""},
	} {
		got := MatchText(unix.NFPROTO_IPV4, tc.x)
		if tc.want == "" { // a blob too short for its struct: a marker, not ports
			if !strings.Contains(got, "UNSUPPORTED[") {
				t.Errorf("%s %x: %q, want an UNSUPPORTED marker", tc.x.Name, tc.x.Info, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.x.Name, got, tc.want)
		}
	}
	if got := TargetText(unix.NFPROTO_IPV6, nl.Xt{Name: "REJECT", Info: []byte{4, 0, 0, 0}}); got != " --reject-with icmp6-port-unreachable" {
		t.Errorf("REJECT ipv6: %q", got)
	}
}

// ports lays out the port ranges of struct xt_tcp/xt_udp, then the bytes
// that follow them.
func ports(slo, shi, dlo, dhi uint16, rest ...byte) []byte {
	b := make([]byte, 8, 8+len(rest))
	le.PutUint16(b, slo)
	le.PutUint16(b[2:], shi)
	le.PutUint16(b[4:], dlo)
	le.PutUint16(b[6:], dhi)
	return append(b, rest...)
}

// FuzzBlobs feeds arbitrary info blobs to every decoder: a blob comes from
// the kernel, and a short or odd one must print a marker, never panic.
// Every printer's text starts with the space its caller joins on, and the
// comment match, decoded by hand for speed (see the package doc), reads the
// same string as google/nftables/xt's decoder for every blob the kernel can
// hold (a C string padded with NULs), quoted so that SplitArgs gives it back.
func FuzzBlobs(f *testing.F) {
	f.Add("conntrack", uint32(3), make([]byte, 160))
	f.Add("tcp", uint32(0), []byte{0, 0, 255, 255, 0, 80, 0, 80, 0, 0, 0, 0})
	f.Add("DNAT", uint32(2), make([]byte, 48))
	f.Add("comment", uint32(0), []byte("default/web:http \"cluster\" IP\nnext line"))
	f.Fuzz(func(t *testing.T, name string, rev uint32, info []byte) {
		for _, fam := range []byte{unix.NFPROTO_IPV4, unix.NFPROTO_IPV6} {
			for _, text := range []string{
				MatchText(fam, nl.Xt{Name: name, Rev: rev, Info: info}),
				TargetText(fam, nl.Xt{Name: name, Rev: rev, Info: info, Target: true}),
			} {
				if !strings.HasPrefix(text, " ") {
					t.Fatalf("%s rev %d: text %q does not start with a space", name, rev, text)
				}
			}
		}
		blob := make([]byte, xt.CommentSize)
		copy(blob, info)
		if i := bytes.IndexByte(blob, 0); i >= 0 && bytes.Count(blob[i:], []byte{0}) != len(blob)-i {
			return // bytes after the C string's end: iptables never writes that
		}
		ref, err := xt.Unmarshal("comment", xt.TableFamily(unix.NFPROTO_IPV4), 0, blob)
		if err != nil {
			t.Fatalf("xt cannot decode a %d-byte comment: %v", len(blob), err)
		}
		text := MatchText(unix.NFPROTO_IPV4, nl.Xt{Name: "comment", Info: blob})
		if got := vocab.SplitArgs(text); len(got) != 2 || got[0] != "--comment" || got[1] != string(*ref.(*xt.Comment)) {
			t.Fatalf("comment %q: printed %q, which reads back as %q", string(*ref.(*xt.Comment)), text, got)
		}
	})
}
