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
			var ref expr.Any
			switch e.Name {
			case "payload":
				ref = &expr.Payload{}
			case "cmp":
				ref = &expr.Cmp{}
			case "meta":
				ref = &expr.Meta{}
			case "bitwise":
				ref = &expr.Bitwise{}
			case "lookup":
				ref = &expr.Lookup{}
			default:
				continue
			}
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

func FuzzDecodeObjects(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 8, 0, 1, 0, 'a', 'b', 'c', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Data: data}
		_, _ = nl.DecodeTable(m)
		_, _ = nl.DecodeChain(m)
		s, err := nl.DecodeSet(m)
		if err == nil {
			_ = nl.DecodeElems(m, &s)
			_ = SetModel(&s)
		}
	})
}
