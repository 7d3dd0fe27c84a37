package nfttext

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/google/nftables/expr"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/iptsave"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/xtblob"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// IptablesRule renders an iptables-nft rule exactly as iptables-nft-save prints
// it after "-A CHAIN": the address, interface and protocol options first,
// then the matches in rule order (iptables-nft stores -m tcp ports and
// -m mark as native Payload/meta expressions, the rest as xtables
// "match"/"target" blobs), then the target.
func IptablesRule(r nl.Rule, isChain func(string) bool) rules.Rule {
	x := &xtDecompiler{fam: r.Family}
	for _, e := range r.Exprs {
		x.expr(nl.DecodeExpr(r.Family, e))
	}
	var parts []string
	for _, f := range []struct {
		flag, val string
		inv       bool
	}{{"-s", x.src, x.srcInv}, {"-d", x.dst, x.dstInv}, {"-i", x.in, x.inInv}, {"-o", x.out, x.outInv}, {"-p", x.proto, x.protoInv}} {
		if f.val == "" {
			continue
		}
		if f.inv {
			parts = append(parts, "!")
		}
		parts = append(parts, f.flag, f.val)
	}
	parts = append(parts, x.matches...)
	if r.Comment != "" && !x.sawComment {
		// Newer iptables-nft keeps -m comment in the rule's userdata and
		// prints it after the other matches.
		parts = append(parts, "-m comment --comment "+vocab.Quote(r.Comment))
	}
	if x.target != "" {
		parts = append(parts, x.target)
	}
	return iptsave.Rule(strings.Join(parts, " "), isChain)
}

type xtDecompiler struct {
	fam               byte
	regs              registers
	src, dst, in, out string
	proto             string
	srcInv, dstInv    bool
	inInv, outInv     bool
	protoInv          bool
	matches           []string
	target            string
	lastPortMatch     int // index+1 in matches of the last native port match
	sawComment        bool
}

func (x *xtDecompiler) set(reg uint32, v regVal) { x.regs.set(slot(reg), v) }

func (x *xtDecompiler) get(reg uint32) regVal {
	if v, ok := x.regs.get(slot(reg)); ok {
		return v
	}
	return regVal{text: rules.Unsupported("empty register %d", reg)}
}

func (x *xtDecompiler) expr(e any) {
	switch e := e.(type) {
	case *expr.Payload:
		if e.OperationType != expr.PayloadLoad {
			x.matches = append(x.matches, rules.Unsupported("payload write"))
			return
		}
		x.set(e.DestRegister, payloadField(x.fam, e))
	case *expr.Meta:
		k, ok := metaKeys[e.Key]
		if !ok || e.SourceRegister {
			x.matches = append(x.matches, rules.Unsupported("meta key %d", e.Key))
			return
		}
		x.set(e.Register, regVal{text: k.text, typ: k.typ, size: k.size, full: k.size})
	case *expr.Bitwise:
		v := x.get(e.SourceRegister)
		v.mask, v.xor = e.Mask, e.Xor
		x.set(e.DestRegister, v)
	case *expr.Cmp:
		x.cmp(x.get(e.Register), e.Op, e.Data)
	case *expr.Range:
		v := x.get(e.Register)
		if !strings.HasPrefix(v.text, "th ") || len(e.FromData) != 2 || len(e.ToData) != 2 {
			x.matches = append(x.matches, rules.Unsupported("range on %s", v.text))
			return
		}
		ports := fmt.Sprintf("%d:%d", binary.BigEndian.Uint16(e.FromData), binary.BigEndian.Uint16(e.ToData))
		x.port(v.text, ports, e.Op == expr.CmpOpNeq)
	case *expr.Counter:
		// counter-free
	case nl.Immediate:
		if e.Verdict == nil {
			x.matches = append(x.matches, rules.Unsupported("immediate data"))
			return
		}
		x.target = verdictIn(iptablesVerdicts, e.Verdict.Code, e.Verdict.Chain)
	case nl.Xt:
		if e.Target {
			x.target = "-j " + e.Name + xtblob.TargetText(x.fam, e)
			return
		}
		x.sawComment = x.sawComment || e.Name == "comment"
		x.sawComment = x.sawComment || e.Name == "comment"
		x.matches = append(x.matches, "-m "+e.Name+xtblob.MatchText(x.fam, e))
	case nl.Bad:
		x.matches = append(x.matches, rules.Unsupported("%s: %v", e.Name, e.Err))
	default:
		x.matches = append(x.matches, rules.Unsupported("expression %T in an iptables-nft rule", e))
	}
}

// cmp turns a native comparison back into the iptables option it came from.
func (x *xtDecompiler) cmp(v regVal, op expr.CmpOp, data []byte) {
	inv := op == expr.CmpOpNeq
	if op != expr.CmpOpEq && op != expr.CmpOpNeq {
		x.matches = append(x.matches, rules.Unsupported("cmp op %d on %s", op, v.text))
		return
	}
	switch v.text {
	case "ip saddr", "ip6 saddr", "ip daddr", "ip6 daddr":
		addr := x.addrMask(v, data)
		if strings.HasSuffix(v.text, "saddr") {
			x.src, x.srcInv = addr, inv
		} else {
			x.dst, x.dstInv = addr, inv
		}
	case "meta l4proto":
		if len(data) == 1 {
			x.proto, x.protoInv = protoName(data[0]), inv
			return
		}
		x.matches = append(x.matches, rules.Unsupported("l4proto %x", data))
	case "iifname", "oifname":
		name := ifaceText(data)
		if v.text == "iifname" {
			x.in, x.inInv = name, inv
		} else {
			x.out, x.outInv = name, inv
		}
	case "th sport", "th dport":
		if len(data) != 2 {
			x.matches = append(x.matches, rules.Unsupported("port %x", data))
			return
		}
		x.port(v.text, fmt.Sprint(binary.BigEndian.Uint16(data)), inv)
	case "meta mark":
		x.matches = append(x.matches, "-m mark"+markText(v, data, inv))
	default:
		x.matches = append(x.matches, rules.Unsupported("cmp on %s", v.text))
	}
}

// port renders a native port comparison as the tcp/udp match iptables-nft
// made it from, merging sport and dport of the same match.
func (x *xtDecompiler) port(field, ports string, inv bool) {
	opt := " --dport "
	if field == "th sport" {
		opt = " --sport "
	}
	if inv {
		opt = " !" + opt
	}
	if x.lastPortMatch == len(x.matches) && x.lastPortMatch > 0 {
		x.matches[len(x.matches)-1] += opt + ports
		return
	}
	x.matches = append(x.matches, "-m "+x.proto+opt+ports)
	x.lastPortMatch = len(x.matches)
}

func (x *xtDecompiler) addrMask(v regVal, data []byte) string {
	full := padTo(data, v.full)
	bits := v.size * 8
	if v.mask != nil {
		b, ok := maskBits(v.mask)
		if !ok {
			return rules.Unsupported("address mask %x", v.mask)
		}
		bits = b + 8*(v.full-v.size)
	}
	a, ok := netip.AddrFromSlice(full)
	if !ok {
		return rules.Unsupported("address %x", data)
	}
	return fmt.Sprintf("%s/%d", a, bits)
}

func protoName(p byte) string {
	if p == 58 {
		return "ipv6-icmp"
	}
	if n, ok := protoNames[p]; ok {
		return n
	}
	return fmt.Sprint(p)
}

// ifaceText undoes iptables-nft's interface encoding: a name compared
// with its trailing NUL is exact, without it a "+" wildcard prefix.
func ifaceText(data []byte) string {
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		return string(data[:i])
	}
	return string(data) + "+"
}

func markText(v regVal, data []byte, inv bool) string {
	val := binary.NativeEndian.Uint32(pad4(data))
	prefix := " --mark "
	if inv {
		prefix = " ! --mark "
	}
	if v.mask == nil {
		return fmt.Sprintf("%s0x%x", prefix, val)
	}
	return fmt.Sprintf("%s0x%x/0x%x", prefix, val, binary.NativeEndian.Uint32(pad4(v.mask)))
}
