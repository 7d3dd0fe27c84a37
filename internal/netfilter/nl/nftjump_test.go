package nl_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nfttext"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
)

func TestNFTJump(t *testing.T) {
	jump, err := nl.NFTJump(netlink.Message{Data: xtMessage(t, "c")})
	if err != nil || string(jump) != "KUBE-NODEPORTS" {
		t.Errorf("NFTJump = %q, %v; want KUBE-NODEPORTS", jump, err)
	}
}

// FuzzNFTJump: for any rule message, the shallow walk never panics and
// gives the Jump the full read (nfttext.NFTRule) gives.
func FuzzNFTJump(f *testing.F) {
	f.Add(xtMessage(f, "default/kubernetes:https cluster IP"))
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Data: data}
		nr, err := nl.DecodeRule(m)
		jump, serr := nl.NFTJump(m)
		if err != nil || serr != nil {
			return
		}
		if full := nfttext.NFTRule(nr, func(string) *nl.Set { return nil }); string(jump) != full.Jump {
			t.Errorf("shallow jump %q, full %q (%s)", jump, full.Jump, full.Text)
		}
	})
}

// elemMessage builds a NEWSETELEM message of a verdict map whose elements
// have the given verdict codes, each to chain "c<i>".
func elemMessage(tb testing.TB, codes ...int32) []byte {
	tb.Helper()
	marshal := func(as []netlink.Attribute) []byte {
		b, err := netlink.MarshalAttributes(as)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	var elems []netlink.Attribute
	for i, code := range codes {
		verdict := marshal([]netlink.Attribute{
			{Type: unix.NFTA_VERDICT_CODE, Data: binary.BigEndian.AppendUint32(nil, uint32(code))},
			{Type: unix.NFTA_VERDICT_CHAIN, Data: []byte{'c', byte('0' + i), 0}},
		})
		elems = append(elems, netlink.Attribute{Type: netlink.Nested | 1, Data: marshal([]netlink.Attribute{
			{Type: netlink.Nested | unix.NFTA_SET_ELEM_KEY, Data: marshal([]netlink.Attribute{{Type: unix.NFTA_DATA_VALUE, Data: []byte{10, 0, 0, byte(i)}}})},
			{Type: netlink.Nested | unix.NFTA_SET_ELEM_DATA, Data: marshal([]netlink.Attribute{{Type: netlink.Nested | unix.NFTA_DATA_VERDICT, Data: verdict}})},
		})})
	}
	body := marshal([]netlink.Attribute{
		{Type: unix.NFTA_SET_ELEM_LIST_TABLE, Data: []byte("kube-proxy\x00")},
		{Type: unix.NFTA_SET_ELEM_LIST_SET, Data: []byte("service-ips\x00")},
		{Type: netlink.Nested | unix.NFTA_SET_ELEM_LIST_ELEMENTS, Data: marshal(elems)},
	})
	return append([]byte{unix.NFPROTO_IPV4, 0, 0, 0}, body...)
}

func TestElemJumps(t *testing.T) {
	var got []string
	err := nl.ElemJumps(netlink.Message{Data: elemMessage(t, unix.NFT_GOTO, 0, unix.NFT_JUMP, 1)}, func(c []byte) { got = append(got, string(c)) })
	if err != nil || !slices.Equal(got, []string{"c0", "c2"}) {
		t.Errorf("ElemJumps = %q, %v; want the goto's and the jump's chains [c0 c2], not drop's or accept's", got, err)
	}
}

// FuzzElemJumps: for any element message, the shallow walk never panics
// and gives the chains of the elements DecodeElems reads with a jump or
// goto verdict, in order.
func FuzzElemJumps(f *testing.F) {
	f.Add(elemMessage(f, unix.NFT_GOTO, 0, unix.NFT_JUMP))
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Data: data}
		var got []string
		serr := nl.ElemJumps(m, func(c []byte) { got = append(got, string(c)) })
		var s nl.Set
		if err := nl.DecodeElems(m, &s); err != nil || serr != nil {
			return
		}
		var want []string
		for _, e := range s.Elems {
			if e.Verdict != nil && (e.Verdict.Code == unix.NFT_JUMP || e.Verdict.Code == unix.NFT_GOTO) {
				want = append(want, e.Verdict.Chain)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("shallow jumps %q, full %q", got, want)
		}
	})
}
