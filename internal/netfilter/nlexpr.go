package netfilter

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Expressions google/nftables v0.3.0 gets wrong or does not keep raw are
// decoded here (and, for speed, the hot ones, see decodeHot): ct (it reads the 1-byte direction as a u32 and ignores
// SREG), immediate (verdict and data in one type), and the xtables
// match/target blobs (iptables-nft), which are decoded per extension in
// xt.go.

type ctExpr struct {
	key       uint32
	dreg      uint32
	sreg      uint32
	direction int // -1 when absent
}

type immExpr struct {
	dreg    uint32
	data    []byte
	verdict *nlVerdict
}

type xtExpr struct {
	target bool
	name   string
	rev    uint32
	info   []byte
}

// badExpr is an expression that could not be decoded.
type badExpr struct {
	name string
	err  error
}

// decodeExpr decodes one rule expression for family fam.
func decodeExpr(fam byte, e nlExpr) any {
	as, err := attrs(e.data)
	if err != nil {
		return badExpr{e.name, err}
	}
	switch e.name {
	case "ct":
		c := ctExpr{direction: -1}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_CT_DREG:
				c.dreg = be32(a.Data)
			case unix.NFTA_CT_KEY:
				c.key = be32(a.Data)
			case unix.NFTA_CT_DIRECTION:
				if len(a.Data) > 0 {
					c.direction = int(a.Data[0])
				}
			case unix.NFTA_CT_SREG:
				c.sreg = be32(a.Data)
			}
		}
		return c
	case "immediate":
		var im immExpr
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_IMMEDIATE_DREG:
				im.dreg = be32(a.Data)
			case unix.NFTA_IMMEDIATE_DATA:
				ds, _ := attrs(a.Data)
				for _, d := range ds {
					switch d.Type {
					case unix.NFTA_DATA_VALUE:
						im.data = d.Data
					case unix.NFTA_DATA_VERDICT:
						v := decodeVerdict(d.Data)
						im.verdict = &v
					}
				}
			}
		}
		return im
	case "payload", "cmp", "meta", "bitwise", "lookup":
		return decodeHot(e.name, as)
	case "match", "target":
		x := xtExpr{target: e.name == "target"}
		for _, a := range as {
			switch a.Type {
			case 1: // NFTA_MATCH_NAME / NFTA_TARGET_NAME
				x.name = str(a.Data)
			case 2: // *_REV
				x.rev = be32(a.Data)
			case 3: // *_INFO
				x.info = a.Data
			}
		}
		return x
	}
	var ex expr.Any
	switch e.name {
	case "payload":
		ex = &expr.Payload{}
	case "meta":
		ex = &expr.Meta{}
	case "cmp":
		ex = &expr.Cmp{}
	case "bitwise":
		ex = &expr.Bitwise{}
	case "lookup":
		ex = &expr.Lookup{}
	case "nat":
		ex = &expr.NAT{}
	case "masq":
		ex = &expr.Masq{}
	case "numgen":
		ex = &expr.Numgen{}
	case "fib":
		ex = &expr.Fib{}
	case "reject":
		ex = &expr.Reject{}
	case "dynset":
		ex = &expr.Dynset{}
	case "counter":
		return &expr.Counter{} // counter-free: packets and bytes are dropped
	case "limit":
		ex = &expr.Limit{}
	case "range":
		ex = &expr.Range{}
	case "objref":
		ex = &expr.Objref{}
	default:
		return badExpr{e.name, fmt.Errorf("expression %q is not decoded by this reader", e.name)}
	}
	if err := expr.Unmarshal(fam, e.data, ex); err != nil {
		return badExpr{e.name, err}
	}
	return ex
}

// decodeHot decodes the expressions nearly every kube-proxy rule holds
// directly from their attributes, without google/nftables' copying
// decoder; the result uses its types. A shift (bitwise op) is refused:
// google/nftables has no field for it and would read it as a mask.
func decodeHot(name string, as []netlink.Attribute) any {
	value := func(b []byte) []byte { return dataValue(b) }
	switch name {
	case "payload":
		p := &expr.Payload{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_PAYLOAD_DREG:
				p.DestRegister = be32(a.Data)
			case unix.NFTA_PAYLOAD_BASE:
				p.Base = expr.PayloadBase(be32(a.Data))
			case unix.NFTA_PAYLOAD_OFFSET:
				p.Offset = be32(a.Data)
			case unix.NFTA_PAYLOAD_LEN:
				p.Len = be32(a.Data)
			case unix.NFTA_PAYLOAD_SREG:
				p.OperationType, p.SourceRegister = expr.PayloadWrite, be32(a.Data)
			}
		}
		return p
	case "cmp":
		c := &expr.Cmp{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_CMP_SREG:
				c.Register = be32(a.Data)
			case unix.NFTA_CMP_OP:
				c.Op = expr.CmpOp(be32(a.Data))
			case unix.NFTA_CMP_DATA:
				c.Data = value(a.Data)
			}
		}
		return c
	case "meta":
		m := &expr.Meta{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_META_DREG:
				m.Register = be32(a.Data)
			case unix.NFTA_META_KEY:
				m.Key = expr.MetaKey(be32(a.Data))
			case unix.NFTA_META_SREG:
				m.Register, m.SourceRegister = be32(a.Data), true
			}
		}
		return m
	case "bitwise":
		bw := &expr.Bitwise{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_BITWISE_SREG:
				bw.SourceRegister = be32(a.Data)
			case unix.NFTA_BITWISE_DREG:
				bw.DestRegister = be32(a.Data)
			case unix.NFTA_BITWISE_LEN:
				bw.Len = be32(a.Data)
			case unix.NFTA_BITWISE_MASK:
				bw.Mask = value(a.Data)
			case unix.NFTA_BITWISE_XOR:
				bw.Xor = value(a.Data)
			case 6: // NFTA_BITWISE_OP
				if op := be32(a.Data); op != 0 {
					return badExpr{name, fmt.Errorf("bitwise operation %d (shift) is not decoded", op)}
				}
			}
		}
		return bw
	case "lookup":
		l := &expr.Lookup{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_LOOKUP_SET:
				l.SetName = str(a.Data)
			case unix.NFTA_LOOKUP_SREG:
				l.SourceRegister = be32(a.Data)
			case unix.NFTA_LOOKUP_DREG:
				l.DestRegister, l.IsDestRegSet = be32(a.Data), true
			case unix.NFTA_LOOKUP_SET_ID:
				l.SetID = be32(a.Data)
			case unix.NFTA_LOOKUP_FLAGS:
				l.Invert = be32(a.Data)&unix.NFT_LOOKUP_F_INV != 0
			}
		}
		return l
	}
	return badExpr{name, errors.New("not a hot expression")}
}
