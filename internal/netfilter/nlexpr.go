package netfilter

import (
	"fmt"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Expressions google/nftables v0.3.0 gets wrong or does not keep raw are
// decoded here: ct (it reads the 1-byte direction as a u32 and ignores
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
