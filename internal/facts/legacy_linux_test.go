//go:build linux

package facts

import (
	"encoding/binary"
	"testing"
)

// legacyBlob builds a table blob: one user chain head per name, then the
// table's closing ERROR entry, laid out like the kernel's.
func legacyBlob(l entryLayout, names ...string) []byte {
	var blob []byte
	for _, n := range append(names, "ERROR") {
		e := make([]byte, l.minSize+64) // entry + struct xt_error_target, aligned
		binary.NativeEndian.PutUint16(e[l.targetOffsetAt:], uint16(l.minSize))
		binary.NativeEndian.PutUint16(e[l.nextOffsetAt:], uint16(len(e)))
		target := e[l.minSize:]
		binary.NativeEndian.PutUint16(target, 64)
		copy(target[2:], "ERROR")
		copy(target[targetHdrLen:], n)
		blob = append(blob, e...)
	}
	return blob
}

func TestParseLegacyEntries(t *testing.T) {
	for _, l := range []entryLayout{ipv4Entry, ipv6Entry} {
		got, err := parseLegacyEntries(legacyBlob(l, "KUBE-SERVICES", "KUBE-SEP-ABCDEFGHIJKLMNOPQRST"), l)
		if err != nil || len(got) != 2 || got[0] != "KUBE-SERVICES" || got[1] != "KUBE-SEP-ABCDEFGHIJKLMNOPQRST" {
			t.Errorf("got %q, %v", got, err)
		}
		if _, err := parseLegacyEntries(legacyBlob(l, "X")[:l.minSize+10], l); err == nil {
			t.Error("a truncated blob was accepted")
		}
	}
}

func FuzzParseLegacyEntries(f *testing.F) {
	f.Add(legacyBlob(ipv4Entry, "KUBE-SERVICES"), false)
	f.Add(legacyBlob(ipv6Entry, "KUBE-IPTABLES-HINT"), true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, blob []byte, ipv6 bool) {
		l := ipv4Entry
		if ipv6 {
			l = ipv6Entry
		}
		_, _ = parseLegacyEntries(blob, l) // must not panic or loop on any blob
	})
}
