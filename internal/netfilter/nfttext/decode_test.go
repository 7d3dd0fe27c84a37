package nfttext

import (
	"reflect"
	"testing"

	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
)

// A rule message as the kernel sends it for
// "ip daddr 10.0.0.0/8 meta l4proto tcp th dport 80 counter jump KUBE-X".
func sampleRule(t testing.TB) []byte {
	expr := func(name string, as ...netlink.Attribute) netlink.Attribute {
		data, err := netlink.MarshalAttributes(as)
		if err != nil {
			t.Fatal(err)
		}
		e, err := netlink.MarshalAttributes([]netlink.Attribute{
			{Type: unix.NFTA_EXPR_NAME, Data: append([]byte(name), 0)},
			{Type: unix.NLA_F_NESTED | unix.NFTA_EXPR_DATA, Data: data},
		})
		if err != nil {
			t.Fatal(err)
		}
		return netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_LIST_ELEM, Data: e}
	}
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	nested := func(as ...netlink.Attribute) []byte {
		b, err := netlink.MarshalAttributes(as)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	exprs := nested(
		expr("payload", netlink.Attribute{Type: unix.NFTA_PAYLOAD_DREG, Data: u32(1)}, netlink.Attribute{Type: unix.NFTA_PAYLOAD_BASE, Data: u32(1)},
			netlink.Attribute{Type: unix.NFTA_PAYLOAD_OFFSET, Data: u32(16)}, netlink.Attribute{Type: unix.NFTA_PAYLOAD_LEN, Data: u32(1)}),
		expr("cmp", netlink.Attribute{Type: unix.NFTA_CMP_SREG, Data: u32(1)}, netlink.Attribute{Type: unix.NFTA_CMP_OP, Data: u32(0)},
			netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_CMP_DATA, Data: nested(netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte{10}})}),
		expr("meta", netlink.Attribute{Type: unix.NFTA_META_KEY, Data: u32(unix.NFT_META_L4PROTO)}, netlink.Attribute{Type: unix.NFTA_META_DREG, Data: u32(1)}),
		expr("cmp", netlink.Attribute{Type: unix.NFTA_CMP_SREG, Data: u32(1)}, netlink.Attribute{Type: unix.NFTA_CMP_OP, Data: u32(0)},
			netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_CMP_DATA, Data: nested(netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte{6}})}),
		expr("payload", netlink.Attribute{Type: unix.NFTA_PAYLOAD_DREG, Data: u32(1)}, netlink.Attribute{Type: unix.NFTA_PAYLOAD_BASE, Data: u32(2)},
			netlink.Attribute{Type: unix.NFTA_PAYLOAD_OFFSET, Data: u32(2)}, netlink.Attribute{Type: unix.NFTA_PAYLOAD_LEN, Data: u32(2)}),
		expr("cmp", netlink.Attribute{Type: unix.NFTA_CMP_SREG, Data: u32(1)}, netlink.Attribute{Type: unix.NFTA_CMP_OP, Data: u32(0)},
			netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_CMP_DATA, Data: nested(netlink.Attribute{Type: unix.NFTA_DATA_VALUE, Data: []byte{0, 80}})}),
		expr("counter"),
		expr("immediate", netlink.Attribute{Type: unix.NFTA_IMMEDIATE_DREG, Data: u32(0)},
			netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_IMMEDIATE_DATA, Data: nested(netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_DATA_VERDICT, Data: nested(
				netlink.Attribute{Type: unix.NFTA_VERDICT_CODE, Data: u32(uint32(0xfffffffd))}, // NFT_JUMP
				netlink.Attribute{Type: unix.NFTA_VERDICT_CHAIN, Data: []byte("KUBE-X\x00")})})}),
	)
	body := nested(
		netlink.Attribute{Type: unix.NFTA_RULE_TABLE, Data: []byte("filter\x00")},
		netlink.Attribute{Type: unix.NFTA_RULE_CHAIN, Data: []byte("INPUT\x00")},
		netlink.Attribute{Type: unix.NLA_F_NESTED | unix.NFTA_RULE_EXPRESSIONS, Data: exprs},
	)
	return append([]byte{unix.NFPROTO_IPV4, 0, 0, 0}, body...)
}

func TestDecodeRuleBothSyntaxes(t *testing.T) {
	r, err := nl.DecodeRule(netlink.Message{Data: sampleRule(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Table != "filter" || r.Chain != "INPUT" || len(r.Exprs) != 8 {
		t.Fatalf("decodeRule = %+v", r)
	}
	ipt := IptablesRule(r, func(c string) bool { return c == "KUBE-X" })
	if want := "-d 10.0.0.0/8 -p tcp -m tcp --dport 80 -j KUBE-X"; ipt.Text != want || ipt.Jump != "KUBE-X" {
		t.Errorf("iptables text = %q (jump %q), want %q", ipt.Text, ipt.Jump, want)
	}
	r.Comment = "from userdata"
	if got := IptablesRule(r, func(string) bool { return true }); got.Comment != "from userdata" || got.Text != `-d 10.0.0.0/8 -p tcp -m tcp --dport 80 -m comment --comment "from userdata" -j KUBE-X` {
		t.Errorf("iptables rule with a userdata comment = %+v", got)
	}
	r.Comment = ""
	nft := NFTRule(r, func(string) *nl.Set { return nil })
	if want := "ip daddr 10.0.0.0/8 meta l4proto tcp th dport 80 counter jump KUBE-X"; nft.Text != want || nft.Jump != "KUBE-X" {
		t.Errorf("nft text = %q (jump %q), want %q", nft.Text, nft.Jump, want)
	}
}

// FuzzDecodeRule decodes arbitrary rule messages. Beyond not crashing, the
// hand decoder of the hot expressions (nl.DecodeExpr's payload, cmp, meta,
// bitwise, lookup, written for speed) must agree with google/nftables' own
// decoder on every expression both read.
func FuzzDecodeRule(f *testing.F) {
	f.Add(sampleRule(f))
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := nl.DecodeRule(netlink.Message{Data: data})
		if err != nil {
			return
		}
		set := &nl.Set{Name: "s", KeyType: 7<<12 | 12<<6 | 13, KeyLen: 12, Flags: unix.NFT_SET_ANONYMOUS | unix.NFT_SET_MAP, DataType: nl.VerdictDataType,
			Elems: []nl.Elem{{Key: []byte{1, 2, 3, 4, 6, 0, 0, 0, 0, 80, 0, 0}, Verdict: &nl.Verdict{Code: 1}}}}
		_ = NFTRule(r, func(string) *nl.Set { return set })
		_ = IptablesRule(r, func(string) bool { return true })
		for _, e := range r.Exprs {
			newRef, ok := hotExprs[e.Name]
			if !ok {
				continue
			}
			ref := newRef()
			hot := nl.DecodeExpr(r.Family, e)
			if _, bad := hot.(nl.Bad); bad {
				continue
			}
			if err := expr.Unmarshal(r.Family, e.Data, ref); err != nil {
				continue
			}
			if !reflect.DeepEqual(hot, ref) {
				t.Fatalf("%s %x: hand decoder %+v, google/nftables %+v", e.Name, e.Data, hot, ref)
			}
		}
	})
}

// FuzzDecodeObjects decodes arbitrary table, chain and set messages.
// Beyond not crashing, what a table decodes to (and a chain's names and
// comment) is a fixed point: written back the way the kernel sends it
// (names as C strings, the comment as libnftnl's udata TLV) it decodes to
// the same.
// hotExprs are the expressions nl decodes by hand, each with google/nftables'
// type for the same expression.
var hotExprs = map[string]func() expr.Any{
	"payload": func() expr.Any { return &expr.Payload{} },
	"cmp":     func() expr.Any { return &expr.Cmp{} },
	"meta":    func() expr.Any { return &expr.Meta{} },
	"bitwise": func() expr.Any { return &expr.Bitwise{} },
	"lookup":  func() expr.Any { return &expr.Lookup{} },
}

func FuzzDecodeObjects(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 8, 0, 1, 0, 'a', 'b', 'c', 0})
	f.Add(objectMessage(f, unix.NFPROTO_IPV6, []netlink.Attribute{
		{Type: unix.NFTA_TABLE_NAME, Data: []byte("kube-proxy\x00")},
		{Type: 6, Data: []byte{0, 12, 'r', 'u', 'l', 'e', 's', ' ', 'f', 'o', 'r', ' ', 'k', 0}},
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Data: data}
		if tbl, err := nl.DecodeTable(m); err == nil && len(tbl.Comment) < 254 {
			again, err := nl.DecodeTable(netlink.Message{Data: objectMessage(t, tbl.Family, []netlink.Attribute{
				{Type: unix.NFTA_TABLE_NAME, Data: append([]byte(tbl.Name), 0)},
				{Type: 6, Data: commentUdata(tbl.Comment)}, // NFTA_TABLE_USERDATA
			})})
			if err != nil || again != tbl {
				t.Fatalf("table %+v written back decodes to %+v (%v)", tbl, again, err)
			}
		}
		if c, err := nl.DecodeChain(m); err == nil && len(c.Comment) < 254 {
			again, err := nl.DecodeChain(netlink.Message{Data: objectMessage(t, c.Family, []netlink.Attribute{
				{Type: unix.NFTA_CHAIN_TABLE, Data: append([]byte(c.Table), 0)},
				{Type: unix.NFTA_CHAIN_NAME, Data: append([]byte(c.Name), 0)},
				{Type: 0xc, Data: commentUdata(c.Comment)}, // NFTA_CHAIN_USERDATA
			})})
			if err != nil || again.Family != c.Family || again.Table != c.Table || again.Name != c.Name || again.Comment != c.Comment {
				t.Fatalf("chain %+v written back decodes to %+v (%v)", c, again, err)
			}
		}
		s, err := nl.DecodeSet(m)
		if err == nil {
			_ = nl.DecodeElems(m, &s)
			_ = SetModel(&s)
		}
	})
}

// objectMessage is an nftables message: the nfgenmsg header, then as.
func objectMessage(t testing.TB, fam byte, as []netlink.Attribute) []byte {
	b, err := netlink.MarshalAttributes(as)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{fam, 0, 0, 0}, b...)
}

// commentUdata is libnftnl's comment TLV (type 0, length, the string and
// its NUL); an empty comment is no TLV at all.
func commentUdata(c string) []byte {
	if c == "" {
		return nil
	}
	return append([]byte{0, byte(len(c) + 1)}, append([]byte(c), 0)...)
}
