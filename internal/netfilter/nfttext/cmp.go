package nfttext

// Comparisons: a loaded field, possibly masked, against a constant, in
// the shortest nft spelling that compiles back to the same expressions
// (prefixes, ct state flags).

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/google/nftables/expr"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func cmpOp(op expr.CmpOp) string {
	return map[expr.CmpOp]string{expr.CmpOpEq: "", expr.CmpOpNeq: "!= ", expr.CmpOpLt: "< ", expr.CmpOpLte: "<= ", expr.CmpOpGt: "> ", expr.CmpOpGte: ">= "}[op]
}

func cmpText(v regVal, op string, data []byte) string {
	isAddr := v.typ == "ipv4_addr" || v.typ == "ipv6_addr"
	switch {
	case v.mask != nil && isAddr && allZero(v.xor):
		if bits, ok := maskBits(v.mask); ok {
			return fmt.Sprintf("%s %s%s/%d", v.text, op, valueText(v.typ, padTo(data, v.full)), bits+8*(v.full-v.size))
		}
	case v.mask != nil && v.typ == "ct_state" && allZero(v.xor) && allZero(data) && op == "!= ":
		// "ct state new" compiles to (state & new) != 0.
		return v.text + " " + valueText(v.typ, v.mask)
	case v.mask != nil && allZero(v.xor):
		return fmt.Sprintf("%s & %s %s%s", v.text, hexText(v.typ, v.mask), eqOp(op), hexText(v.typ, data))
	case isAddr && v.size < v.full:
		return fmt.Sprintf("%s %s%s/%d", v.text, op, valueText(v.typ, padTo(data, v.full)), v.size*8)
	}
	if v.mask != nil {
		return rules.Unsupported("%s with mask %x xor %x", v.text, v.mask, v.xor)
	}
	return fmt.Sprintf("%s %s%s", v.text, op, valueText(v.typ, data))
}

func eqOp(op string) string {
	if op == "" {
		return "== "
	}
	return op
}

func hexText(typ string, b []byte) string {
	if typ == "mark" || typ == "integer" || typ == "ct_status" || typ == "ct_state" {
		return fmt.Sprintf("0x%08x", binary.NativeEndian.Uint32(pad4(b)))
	}
	return fmt.Sprintf("0x%x", b)
}

func allZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

func padTo(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(bytes.Clone(b), make([]byte, n-len(b))...)
}

// maskBits reports the prefix length of a contiguous network mask.
func maskBits(mask []byte) (int, bool) {
	bits, done := 0, false
	for _, m := range mask {
		for b := 7; b >= 0; b-- {
			set := m&(1<<b) != 0
			if set && done {
				return 0, false
			}
			if set {
				bits++
			} else {
				done = true
			}
		}
	}
	return bits, true
}
