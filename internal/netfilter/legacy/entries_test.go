package legacy

import (
	"encoding/binary"
	"reflect"
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// ext builds an xt_entry_match / xt_entry_target record: header, data,
// padded to 8 like XT_ALIGN.
func ext(name string, data []byte) []byte {
	size := (extHdrLen + len(data) + 7) &^ 7
	b := make([]byte, size)
	binary.NativeEndian.PutUint16(b, uint16(size))
	copy(b[2:2+extNameLen], name)
	copy(b[extHdrLen:], data)
	return b
}

func verdict(v int32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, uint32(v))
	return ext("", b)
}

func chainHead(name string) []byte {
	b := make([]byte, errorNameLen)
	copy(b, name)
	return ext("ERROR", b)
}

func comment(s string) []byte {
	b := make([]byte, commentLen)
	copy(b, s)
	return ext("comment", b)
}

// entry lays out one ipt_entry / ip6t_entry with its matches and target.
func entry(l Layout, target []byte, matches ...[]byte) []byte {
	e := make([]byte, l.minSize)
	for _, m := range matches {
		e = append(e, m...)
	}
	binary.NativeEndian.PutUint16(e[l.targetOffsetAt:], uint16(len(e)))
	e = append(e, target...)
	binary.NativeEndian.PutUint16(e[l.nextOffsetAt:], uint16(len(e)))
	return e
}

// sampleTable is an INPUT-only table: a jump to USER (by the offset of
// its first entry), a commented rule, a DROP policy; USER holds an
// explicit RETURN and its closing RETURN; then the closing ERROR.
func sampleTable(l Layout) (Info, []byte) {
	rule := len(entry(l, verdict(0)))
	commented := len(entry(l, verdict(-2), comment("c")))
	head := len(entry(l, chainHead("USER")))
	userFirst := rule + commented + rule + head
	var blob []byte
	blob = append(blob, entry(l, verdict(int32(userFirst)))...)
	blob = append(blob, entry(l, verdict(-2), comment("c"))...)
	underflow := len(blob)
	blob = append(blob, entry(l, verdict(-1))...)
	blob = append(blob, entry(l, chainHead("USER"))...)
	blob = append(blob, entry(l, verdict(-5))...)
	blob = append(blob, entry(l, verdict(-5))...)
	blob = append(blob, entry(l, chainHead("ERROR"))...)
	info := Info{ValidHooks: 1 << 1, Size: uint32(len(blob))}
	info.Underflow[1] = uint32(underflow)
	return info, blob
}

func TestTable(t *testing.T) {
	for _, l := range []Layout{IPv4, IPv6} {
		info, blob := sampleTable(l)
		tb, err := Table("filter", rules.IPv4, info, blob, l, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tb.Chains) != 2 {
			t.Fatalf("chains %+v", tb.Chains)
		}
		in, user := tb.Chains[0], tb.Chains[1]
		if in.Name != "INPUT" || in.Hook != "input" || in.Policy != "DROP" || len(in.Rules) != 2 {
			t.Errorf("INPUT = %+v", in)
		}
		if in.Rules[0].Jump != "USER" || in.Rules[1].Comment != "c" || in.Rules[1].Jump != "" {
			t.Errorf("INPUT rules = %+v", in.Rules)
		}
		if user.Name != "USER" || user.Policy != "" || len(user.Rules) != 1 {
			t.Errorf("USER = %+v", user)
		}
		skipped, err := Table("filter", rules.IPv4, info, blob, l, func(c string) bool { return c == "INPUT" })
		if err != nil || len(skipped.Chains[0].Rules) != 2 || skipped.Chains[0].Rules[0].Jump != "" || !skipped.Chains[0].Rules[0].NotRead {
			t.Errorf("skipped INPUT = %+v, %v", skipped.Chains, err)
		}
		chains, err := UserChains(blob, l)
		if err != nil || len(chains) != 1 || chains[0] != "USER" {
			t.Errorf("UserChains = %q, %v", chains, err)
		}
		if _, err := UserChains(blob[:l.minSize+10], l); err == nil {
			t.Error("UserChains accepted a truncated blob")
		}
		for _, bad := range [][]byte{blob[:len(blob)-8], blob[:len(blob)-len(entry(l, chainHead("ERROR")))]} {
			if _, err := Table("filter", rules.IPv4, info, bad, l, nil); err == nil {
				t.Error("a truncated blob was accepted")
			}
		}
	}
}

func FuzzTable(f *testing.F) {
	for _, l := range []Layout{IPv4, IPv6} {
		info, blob := sampleTable(l)
		f.Add(blob, l == IPv6, info.ValidHooks, info.HookEntry[1], info.Underflow[1])
	}
	f.Add([]byte{}, false, uint32(0), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, blob []byte, ipv6 bool, hooks, entry1, under1 uint32) {
		l := IPv4
		if ipv6 {
			l = IPv6
		}
		info := Info{ValidHooks: hooks}
		for h := range numHooks {
			info.HookEntry[h], info.Underflow[h] = entry1+uint32(h)*8, under1+uint32(h)*8
		}
		// Must not panic or loop on any blob.
		want, wantErr := Table("t", rules.IPv4, info, blob, l, nil)
		_, _ = UserChains(blob, l)
		_ = Walk(blob, l, func(e Entry) error { _ = e.Comment(); return nil })

		// Giving back what was decoded (here: zeroing it) changes nothing.
		zeroed := slices.Clone(blob)
		got, err := table("t", rules.IPv4, info, zeroed, l, nil, func(n int) { clear(zeroed[:n]) })
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("with free: %+v, %v; without: %+v, %v", got, err, want, wantErr)
		}
		// Skipping chains only forgets their rules' jumps and comments.
		skipped, err := Table("t", rules.IPv4, info, blob, l, func(c string) bool { return len(c)%2 == 0 })
		if (err == nil) != (wantErr == nil) || len(skipped.Chains) != len(want.Chains) {
			t.Fatalf("skipping: %+v, %v; not: %+v, %v", skipped, err, want, wantErr)
		}
		for ci, c := range skipped.Chains {
			w := want.Chains[ci]
			if len(w.Name)%2 == 0 {
				for ri := range w.Rules {
					w.Rules[ri] = rules.Rule{NotRead: true}
				}
			}
			if !reflect.DeepEqual(c, w) {
				t.Fatalf("chain %d skipping: %+v; not: %+v", ci, c, w)
			}
		}
	})
}
