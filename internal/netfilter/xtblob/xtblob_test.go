package xtblob

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
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
	} {
		if got := MatchText(unix.NFPROTO_IPV4, tc.x); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.x.Name, got, tc.want)
		}
	}
	if got := TargetText(unix.NFPROTO_IPV6, nl.Xt{Name: "REJECT", Info: []byte{4, 0, 0, 0}}); got != " --reject-with icmp6-port-unreachable" {
		t.Errorf("REJECT ipv6: %q", got)
	}
}

// FuzzDecodeRule feeds arbitrary rule messages through both decompilers:
// whatever the kernel (or a bug) sends must give text, never a panic.
// FuzzBlobs feeds arbitrary info blobs to every decoder: a blob comes from
// the kernel, and a short or odd one must print a marker, never panic.
func FuzzBlobs(f *testing.F) {
	f.Add("conntrack", uint32(3), make([]byte, 160))
	f.Add("tcp", uint32(0), []byte{0, 0, 255, 255, 0, 80, 0, 80, 0, 0, 0, 0})
	f.Add("DNAT", uint32(2), make([]byte, 48))
	f.Fuzz(func(t *testing.T, name string, rev uint32, info []byte) {
		for _, fam := range []byte{unix.NFPROTO_IPV4, unix.NFPROTO_IPV6} {
			_ = MatchText(fam, nl.Xt{Name: name, Rev: rev, Info: info})
			_ = TargetText(fam, nl.Xt{Name: name, Rev: rev, Info: info, Target: true})
		}
	})
}
