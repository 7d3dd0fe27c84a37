// Package nfttext renders decoded nftables rules and sets (package nl) as
// text: native rules in nft statement syntax (nft.go, stmt.go, set.go,
// cmp.go), iptables-nft rules in iptables-save argument form (iptables.go,
// with the xt match/target blobs printed by package xtblob). Whatever it
// cannot render shows as rules.Unsupported, which no loader accepts.
package nfttext

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// regVal is what a register holds while a rule is decompiled.
type regVal struct {
	text      string // nft expression text ("ip daddr", "meta mark")
	typ       string // nft datatype for rendering constants
	size      int    // bytes loaded
	full      int    // size of the whole field (a shorter load is a prefix)
	mask, xor []byte // set by a bitwise expression
	imm       []byte // an immediate constant
	// parts is how many values a concatenated map result packs ("addr .
	// port" from kube-proxy 1.36's numgen DNAT maps); 0 or 1 otherwise.
	parts int
}

// registers holds the 16 32-bit data registers, each marked when loaded.
type registers struct {
	val    [16]regVal
	loaded [16]bool
}

func (r *registers) set(slot int, v regVal) {
	if slot >= 0 && slot < len(r.val) {
		r.val[slot], r.loaded[slot] = v, true
	}
}

func (r *registers) get(slot int) (regVal, bool) {
	if slot < 0 || slot >= len(r.val) || !r.loaded[slot] {
		return regVal{}, false
	}
	return r.val[slot], true
}

// slot maps nftables register numbers onto 4-byte slots: NFT_REG_1..4 are
// 16 bytes wide and alias NFT_REG32_00.. (numbered from 8).
func slot(reg uint32) int {
	if reg >= 1 && reg <= 4 {
		return int(reg-1) * 4
	}
	return int(reg) - 8
}

type nftDecompiler struct {
	fam    byte
	regs   registers
	out    []string
	jump   string
	lookup func(string) *nl.Set
}

// NFTRule renders a native nftables rule in nft syntax.
func NFTRule(r nl.Rule, lookup func(string) *nl.Set) rules.Rule {
	d := &nftDecompiler{fam: r.Family, lookup: lookup}
	for _, e := range r.Exprs {
		d.expr(nl.DecodeExpr(r.Family, e))
	}
	text := strings.Join(d.out, " ")
	if r.Comment != "" {
		text += " comment " + rules.QuoteNFT(r.Comment)
	}
	return rules.Rule{Text: strings.TrimSpace(text), Comment: r.Comment, Jump: d.jump}
}

func (d *nftDecompiler) emit(s string) { d.out = append(d.out, s) }

func (d *nftDecompiler) set(reg uint32, v regVal) { d.regs.set(slot(reg), v) }

func (d *nftDecompiler) get(reg uint32) regVal {
	v, ok := d.regs.get(slot(reg))
	if !ok {
		return regVal{text: rules.Unsupported("empty register %d", reg)}
	}
	return v
}

func (d *nftDecompiler) expr(e any) {
	switch e := e.(type) {
	case *expr.Payload:
		if e.OperationType != expr.PayloadLoad {
			d.emit(rules.Unsupported("payload write"))
			return
		}
		d.set(e.DestRegister, payloadField(d.fam, e))
	case *expr.Meta:
		d.meta(e)
	case nl.Ct:
		d.ct(e)
	case *expr.Bitwise:
		v := d.get(e.SourceRegister)
		v.mask, v.xor = e.Mask, e.Xor
		d.set(e.DestRegister, v)
	case *expr.Cmp:
		d.emit(cmpText(d.get(e.Register), cmpOp(e.Op), e.Data))
	case *expr.Range:
		v := d.get(e.Register)
		op := ""
		if e.Op == expr.CmpOpNeq {
			op = "!= "
		}
		d.emit(fmt.Sprintf("%s %s%s-%s", v.text, op, valueText(v.typ, e.FromData), valueText(v.typ, e.ToData)))
	case *expr.Lookup:
		d.lookupExpr(e)
	case nl.Immediate:
		if e.Verdict != nil {
			d.verdict(e.Verdict.Code, e.Verdict.Chain)
			return
		}
		d.set(e.Dreg, regVal{imm: e.Data, size: len(e.Data)})
	case *expr.Numgen:
		kind := map[uint32]string{0: "inc", 1: "random"}[e.Type]
		text := fmt.Sprintf("numgen %s mod %d", kind, e.Modulus)
		if e.Offset != 0 {
			text += fmt.Sprintf(" offset %d", e.Offset)
		}
		d.set(e.Register, regVal{text: text, typ: "integer", size: 4, full: 4})
	case *expr.Fib:
		d.set(e.Register, fibField(e))
	case *expr.NAT:
		d.nat(e)
	case *expr.Masq:
		text := "masquerade"
		if e.ToPorts {
			text += " to :" + d.portText(e.RegProtoMin, e.RegProtoMax)
		}
		d.emit(text + natFlags(e.Random, e.FullyRandom, e.Persistent))
	case *expr.Reject:
		d.emit(rejectText(d.fam, e))
	case *expr.Dynset:
		d.dynset(e)
	case *expr.Counter:
		d.emit("counter")
	case *expr.Limit:
		d.emit(limitText(e))
	case *expr.Objref:
		if e.Type == 1 { // NFT_OBJECT_COUNTER
			d.emit("counter name " + rules.QuoteNFT(e.Name))
			return
		}
		d.emit(rules.Unsupported("objref type %d", e.Type))
	case nl.Bad:
		d.emit(rules.Unsupported("%s: %v", e.Name, e.Err))
	case nl.Xt:
		d.emit(rules.Unsupported("xtables %s %s in an nftables table", map[bool]string{true: "target", false: "match"}[e.Target], e.Name))
	default:
		d.emit(rules.Unsupported("expression %T", e))
	}
}

func payloadField(fam byte, e *expr.Payload) regVal {
	off, n := int(e.Offset), int(e.Len)
	v := regVal{size: n, full: n, typ: "integer"}
	type field struct {
		base      expr.PayloadBase
		off, size int
		text, typ string
	}
	fields := []field{
		{expr.PayloadBaseTransportHeader, 0, 2, "th sport", "inet_service"},
		{expr.PayloadBaseTransportHeader, 2, 2, "th dport", "inet_service"},
	}
	if fam == unix.NFPROTO_IPV6 {
		fields = append(fields, field{expr.PayloadBaseNetworkHeader, 8, 16, "ip6 saddr", "ipv6_addr"},
			field{expr.PayloadBaseNetworkHeader, 24, 16, "ip6 daddr", "ipv6_addr"},
			field{expr.PayloadBaseNetworkHeader, 6, 1, "ip6 nexthdr", "inet_proto"})
	} else {
		fields = append(fields, field{expr.PayloadBaseNetworkHeader, 12, 4, "ip saddr", "ipv4_addr"},
			field{expr.PayloadBaseNetworkHeader, 16, 4, "ip daddr", "ipv4_addr"},
			field{expr.PayloadBaseNetworkHeader, 9, 1, "ip protocol", "inet_proto"})
	}
	for _, f := range fields {
		if f.base == e.Base && f.off == off && (n == f.size || (n < f.size && strings.HasSuffix(f.typ, "_addr"))) {
			v.text, v.typ, v.full = f.text, f.typ, f.size
			return v
		}
	}
	// A raw Payload expression round-trips through nft as itself.
	base := map[expr.PayloadBase]string{expr.PayloadBaseLLHeader: "ll", expr.PayloadBaseNetworkHeader: "nh", expr.PayloadBaseTransportHeader: "th"}[e.Base]
	v.text = fmt.Sprintf("@%s,%d,%d", base, off*8, n*8)
	return v
}

var metaKeys = map[expr.MetaKey]struct {
	text, typ string
	size      int
}{
	expr.MetaKeyMARK:    {"meta mark", "mark", 4},
	expr.MetaKeyL4PROTO: {"meta l4proto", "inet_proto", 1},
	expr.MetaKeyIIFNAME: {"iifname", "ifname", 16},
	expr.MetaKeyOIFNAME: {"oifname", "ifname", 16},
	expr.MetaKeyNFPROTO: {"meta nfproto", "nf_proto", 1},
}

func (d *nftDecompiler) meta(e *expr.Meta) {
	k, ok := metaKeys[e.Key]
	if !ok {
		d.emit(rules.Unsupported("meta key %d", e.Key))
		return
	}
	if e.SourceRegister {
		d.emit(k.text + " set " + d.valueOf(d.get(e.Register), k.typ))
		return
	}
	d.set(e.Register, regVal{text: k.text, typ: k.typ, size: k.size, full: k.size})
}

func (d *nftDecompiler) ct(e nl.Ct) {
	keys := map[uint32]regVal{
		unix.NFT_CT_STATE:  {text: "ct state", typ: "ct_state", size: 4, full: 4},
		unix.NFT_CT_STATUS: {text: "ct status", typ: "ct_status", size: 4, full: 4},
		unix.NFT_CT_MARK:   {text: "ct mark", typ: "mark", size: 4, full: 4},
	}
	v, ok := keys[e.Key]
	if !ok || e.Direction >= 0 {
		d.emit(rules.Unsupported("ct key %d direction %d", e.Key, e.Direction))
		return
	}
	if e.Sreg != 0 {
		d.emit(v.text + " set " + d.valueOf(d.get(e.Sreg), v.typ))
		return
	}
	d.set(e.Dreg, v)
}

// valueOf renders a register used as a statement's value: a constant, a
// field, or a field with a bitwise operation (meta mark | 0x4000).
func (d *nftDecompiler) valueOf(v regVal, typ string) string {
	if v.imm != nil {
		return valueText(typ, v.imm)
	}
	if v.mask == nil {
		return v.text
	}
	m, x := binary.NativeEndian.Uint32(pad4(v.mask)), binary.NativeEndian.Uint32(pad4(v.xor))
	switch {
	case x != 0 && m == ^x:
		return fmt.Sprintf("%s | 0x%08x", v.text, x)
	case m == 0xffffffff:
		return fmt.Sprintf("%s ^ 0x%08x", v.text, x)
	case x == 0:
		return fmt.Sprintf("%s & 0x%08x", v.text, m)
	}
	return rules.Unsupported("%s & 0x%08x ^ 0x%08x", v.text, m, x)
}

func pad4(b []byte) []byte {
	if len(b) >= 4 {
		return b[:4]
	}
	return append(bytes.Clone(b), make([]byte, 4-len(b))...)
}

func (d *nftDecompiler) lookupExpr(e *expr.Lookup) {
	s := d.lookup(e.SetName)
	if s == nil {
		d.emit(rules.Unsupported("lookup in unknown set %s", e.SetName))
		return
	}
	key := d.keyText(e.SourceRegister, int(s.KeyLen))
	ref := "@" + s.Name
	if s.Flags&unix.NFT_SET_ANONYMOUS != 0 {
		ref = "{ " + strings.Join(elementTexts(s), ", ") + " }"
		if s.NotRead {
			ref = "{ " + rules.Unsupported("elements not read") + " }"
		}
	}
	switch {
	case e.IsDestRegSet && e.DestRegister == 0:
		d.emit(key + " vmap " + ref)
	case e.IsDestRegSet:
		d.set(e.DestRegister, regVal{text: key + " map " + ref, typ: concatTypeName(s.DataType), size: int(s.DataLen), full: int(s.DataLen),
			parts: len(keyTypes(s.DataType))})
	case e.Invert:
		d.emit(key + " != " + ref)
	default:
		d.emit(key + " " + ref)
	}
}

// keyText joins the registers a set key of keyLen bytes spans, starting at
// reg, into an nft concatenation.
func (d *nftDecompiler) keyText(reg uint32, keyLen int) string {
	s := slot(reg)
	var parts []string
	for used := 0; used < keyLen || len(parts) == 0; {
		v, ok := d.regs.get(s)
		if !ok || v.size == 0 {
			return rules.Unsupported("key of %d bytes from register %d", keyLen, reg)
		}
		parts = append(parts, v.text)
		step := (v.size + 3) / 4
		used += step * 4
		s += step
	}
	return strings.Join(parts, " . ")
}

func (d *nftDecompiler) verdict(code int32, chain string) {
	if code == unix.NFT_JUMP || code == unix.NFT_GOTO {
		d.jump = chain
	}
	d.emit(verdictText(code, chain))
}
