package nl

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Expressions google/nftables v0.3.0 gets wrong or does not keep raw are
// decoded here (and, for speed, the hot ones, see decodeHot): ct (it reads
// the 1-byte direction as a u32 and ignores SREG), immediate (verdict and
// data in one type), and the xtables match/target expressions (iptables-nft)
// kept raw as Xt, their info blobs printed by package xtblob. v0.3.0 is the
// newest release the module proxy serves (no pseudo-version of master is
// served): move and drop the ct workaround when a tag has the fix.

type Ct struct {
	Key       uint32
	Dreg      uint32
	Sreg      uint32
	Direction int // -1 when absent
}

type Immediate struct {
	Dreg    uint32
	Data    []byte
	Verdict *Verdict
}

type Xt struct {
	Target bool
	Name   string
	Rev    uint32
	Info   []byte
}

// Bad is an expression that could not be decoded.
type Bad struct {
	Name string
	Err  error
}

// DecodeExpr decodes one rule expression for family fam.
func DecodeExpr(fam byte, e Expr) any {
	as, err := Attrs(e.Data)
	if err != nil {
		return Bad{e.Name, err}
	}
	switch e.Name {
	case "ct":
		c := Ct{Direction: -1}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_CT_DREG:
				c.Dreg = BE32(a.Data)
			case unix.NFTA_CT_KEY:
				c.Key = BE32(a.Data)
			case unix.NFTA_CT_DIRECTION:
				if len(a.Data) > 0 {
					c.Direction = int(a.Data[0])
				}
			case unix.NFTA_CT_SREG:
				c.Sreg = BE32(a.Data)
			}
		}
		return c
	case "immediate":
		var im Immediate
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_IMMEDIATE_DREG:
				im.Dreg = BE32(a.Data)
			case unix.NFTA_IMMEDIATE_DATA:
				ds, _ := Attrs(a.Data)
				for _, d := range ds {
					switch d.Type {
					case unix.NFTA_DATA_VALUE:
						im.Data = d.Data
					case unix.NFTA_DATA_VERDICT:
						v := decodeVerdict(d.Data)
						im.Verdict = &v
					}
				}
			}
		}
		return im
	case "payload", "cmp", "meta", "bitwise", "lookup":
		return decodeHot(e.Name, as)
	case "match", "target":
		x := Xt{Target: e.Name == "target"}
		for _, a := range as {
			switch a.Type {
			case 1: // NFTA_MATCH_NAME / NFTA_TARGET_NAME
				x.Name = Str(a.Data)
			case 2: // *_REV
				x.Rev = BE32(a.Data)
			case 3: // *_INFO
				x.Info = a.Data
			}
		}
		return x
	}
	var ex expr.Any
	switch e.Name {
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
		return Bad{e.Name, fmt.Errorf("expression %q is not decoded by this reader", e.Name)}
	}
	if err := expr.Unmarshal(fam, e.Data, ex); err != nil {
		return Bad{e.Name, err}
	}
	return ex
}

// decodeHot decodes the expressions nearly every kube-proxy rule holds
// directly from their attributes, without google/nftables' copying
// decoder; the result uses its types. A shift (bitwise op) is refused:
// google/nftables has no field for it and would read it as a mask.
func decodeHot(name string, as []netlink.Attribute) any {
	value := func(b []byte) []byte { return DataValue(b) }
	switch name {
	case "payload":
		p := &expr.Payload{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_PAYLOAD_DREG:
				p.DestRegister = BE32(a.Data)
			case unix.NFTA_PAYLOAD_BASE:
				p.Base = expr.PayloadBase(BE32(a.Data))
			case unix.NFTA_PAYLOAD_OFFSET:
				p.Offset = BE32(a.Data)
			case unix.NFTA_PAYLOAD_LEN:
				p.Len = BE32(a.Data)
			case unix.NFTA_PAYLOAD_SREG:
				p.OperationType, p.SourceRegister = expr.PayloadWrite, BE32(a.Data)
			}
		}
		return p
	case "cmp":
		c := &expr.Cmp{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_CMP_SREG:
				c.Register = BE32(a.Data)
			case unix.NFTA_CMP_OP:
				c.Op = expr.CmpOp(BE32(a.Data))
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
				m.Register = BE32(a.Data)
			case unix.NFTA_META_KEY:
				m.Key = expr.MetaKey(BE32(a.Data))
			case unix.NFTA_META_SREG:
				m.Register, m.SourceRegister = BE32(a.Data), true
			}
		}
		return m
	case "bitwise":
		bw := &expr.Bitwise{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_BITWISE_SREG:
				bw.SourceRegister = BE32(a.Data)
			case unix.NFTA_BITWISE_DREG:
				bw.DestRegister = BE32(a.Data)
			case unix.NFTA_BITWISE_LEN:
				bw.Len = BE32(a.Data)
			case unix.NFTA_BITWISE_MASK:
				bw.Mask = value(a.Data)
			case unix.NFTA_BITWISE_XOR:
				bw.Xor = value(a.Data)
			case 6: // NFTA_BITWISE_OP
				if op := BE32(a.Data); op != 0 {
					return Bad{name, fmt.Errorf("bitwise operation %d (shift) is not decoded", op)}
				}
			}
		}
		return bw
	case "lookup":
		l := &expr.Lookup{}
		for _, a := range as {
			switch a.Type {
			case unix.NFTA_LOOKUP_SET:
				l.SetName = Str(a.Data)
			case unix.NFTA_LOOKUP_SREG:
				l.SourceRegister = BE32(a.Data)
			case unix.NFTA_LOOKUP_DREG:
				l.DestRegister, l.IsDestRegSet = BE32(a.Data), true
			case unix.NFTA_LOOKUP_SET_ID:
				l.SetID = BE32(a.Data)
			case unix.NFTA_LOOKUP_FLAGS:
				l.Invert = BE32(a.Data)&unix.NFT_LOOKUP_F_INV != 0
			}
		}
		return l
	}
	return Bad{name, errors.New("not a hot expression")}
}
