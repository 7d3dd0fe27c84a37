package xtblob

import (
	"encoding/binary"
	"testing"

	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// BenchmarkHotMatches backs the package doc's choices for the matches in
// nearly every kube-proxy rule: "matchtext" is MatchText's whole
// blob-to-text path as shipped (comment by hand, tcp through xt); "xt" is
// xt.Unmarshal alone (plus, for comment, the same quoting). comment stays
// by hand because its xt path costs more; tcp's xt decoding is a small part
// of its text, so tcp goes through xt.
func BenchmarkHotMatches(b *testing.B) {
	comment := make([]byte, 256)
	copy(comment, "default/web:http cluster IP")
	tcp := make([]byte, 12)
	binary.NativeEndian.PutUint16(tcp[0:], 0)
	binary.NativeEndian.PutUint16(tcp[2:], 0xffff)
	binary.NativeEndian.PutUint16(tcp[4:], 30080)
	binary.NativeEndian.PutUint16(tcp[6:], 30080)
	cases := []struct {
		name string
		x    nl.Xt
		xt   func(data []byte) (string, error)
	}{
		{"comment", nl.Xt{Name: "comment", Info: comment}, func(data []byte) (string, error) {
			info, err := xt.Unmarshal("comment", xt.TableFamily(unix.NFPROTO_IPV4), 0, data)
			if err != nil {
				return "", err
			}
			return " --comment " + vocab.Quote(string(*info.(*xt.Comment))), nil
		}},
		{"tcp", nl.Xt{Name: "tcp", Info: tcp}, func(data []byte) (string, error) {
			_, err := xt.Unmarshal("tcp", xt.TableFamily(unix.NFPROTO_IPV4), 0, data)
			return "", err
		}},
	}
	for _, c := range cases {
		b.Run(c.name+"/matchtext", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if MatchText(unix.NFPROTO_IPV4, c.x) == "" {
					b.Fatal("no text")
				}
			}
		})
		b.Run(c.name+"/xt", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.xt(c.x.Info); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
