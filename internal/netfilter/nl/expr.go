package nl

import (
	"errors"
	"fmt"

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
	var f fields
	if err := f.parse(e.Data); err != nil {
		return Bad{e.Name, err}
	}
	switch e.Name {
	case "ct":
		c := Ct{Key: BE32(f[unix.NFTA_CT_KEY]), Dreg: BE32(f[unix.NFTA_CT_DREG]), Sreg: BE32(f[unix.NFTA_CT_SREG]), Direction: -1}
		if d := f[unix.NFTA_CT_DIRECTION]; len(d) > 0 {
			c.Direction = int(d[0])
		}
		return c
	case "immediate":
		im := Immediate{Dreg: BE32(f[unix.NFTA_IMMEDIATE_DREG])}
		im.Data, im.Verdict = decodeData(f[unix.NFTA_IMMEDIATE_DATA])
		return im
	case "meta":
		return decodeMeta(e.Data)
	case "payload", "cmp", "bitwise", "lookup":
		return decodeHot(e.Name, &f)
	case "match", "target":
		// NFTA_MATCH_NAME / NFTA_TARGET_NAME, *_REV, *_INFO
		return Xt{Target: e.Name == "target", Name: Str(f[1]), Rev: BE32(f[2]), Info: f[3]}
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
func decodeHot(name string, f *fields) any {
	switch name {
	case "payload":
		p := &expr.Payload{DestRegister: BE32(f[unix.NFTA_PAYLOAD_DREG]), Base: expr.PayloadBase(BE32(f[unix.NFTA_PAYLOAD_BASE])),
			Offset: BE32(f[unix.NFTA_PAYLOAD_OFFSET]), Len: BE32(f[unix.NFTA_PAYLOAD_LEN])}
		if s := f[unix.NFTA_PAYLOAD_SREG]; s != nil {
			p.OperationType, p.SourceRegister = expr.PayloadWrite, BE32(s)
		}
		return p
	case "cmp":
		return &expr.Cmp{Register: BE32(f[unix.NFTA_CMP_SREG]), Op: expr.CmpOp(BE32(f[unix.NFTA_CMP_OP])), Data: DataValue(f[unix.NFTA_CMP_DATA])}
	case "bitwise":
		if op := BE32(f[6]); op != 0 { // NFTA_BITWISE_OP
			return Bad{name, fmt.Errorf("bitwise operation %d (shift) is not decoded", op)}
		}
		return &expr.Bitwise{SourceRegister: BE32(f[unix.NFTA_BITWISE_SREG]), DestRegister: BE32(f[unix.NFTA_BITWISE_DREG]),
			Len: BE32(f[unix.NFTA_BITWISE_LEN]), Mask: DataValue(f[unix.NFTA_BITWISE_MASK]), Xor: DataValue(f[unix.NFTA_BITWISE_XOR])}
	case "lookup":
		l := &expr.Lookup{SetName: Str(f[unix.NFTA_LOOKUP_SET]), SourceRegister: BE32(f[unix.NFTA_LOOKUP_SREG]),
			SetID: BE32(f[unix.NFTA_LOOKUP_SET_ID]), Invert: BE32(f[unix.NFTA_LOOKUP_FLAGS])&unix.NFT_LOOKUP_F_INV != 0}
		if d := f[unix.NFTA_LOOKUP_DREG]; d != nil {
			l.DestRegister, l.IsDestRegSet = BE32(d), true
		}
		return l
	}
	return Bad{name, errors.New("not a hot expression")}
}

// decodeMeta is the hot meta expression, walked in order rather than read
// from fields: a source and a destination register both land in
// Register, and, as in google/nftables' decoder (FuzzDecodeRule compares
// the two), the later one wins.
func decodeMeta(b []byte) *expr.Meta {
	m := &expr.Meta{}
	_ = eachAttr(b, func(typ uint16, d []byte) error {
		switch typ {
		case unix.NFTA_META_DREG:
			m.Register = BE32(d)
		case unix.NFTA_META_KEY:
			m.Key = expr.MetaKey(BE32(d))
		case unix.NFTA_META_SREG:
			m.Register, m.SourceRegister = BE32(d), true
		}
		return nil
	})
	return m
}
