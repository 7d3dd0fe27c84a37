package nfttext

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// nftTypes are nft's datatype numbers (nftables src/datatype.h) with their
// element size; a concatenated key packs one 6-bit type number per part.
var nftTypes = map[uint32]struct {
	name string
	size int
}{
	2: {"nf_proto", 1}, 4: {"integer", 4}, 5: {"string", 0}, 7: {"ipv4_addr", 4}, 8: {"ipv6_addr", 16},
	9: {"ether_addr", 6}, 10: {"ether_type", 2}, 12: {"inet_proto", 1}, 13: {"inet_service", 2},
	19: {"mark", 4}, 20: {"iface_index", 4}, 26: {"ct_state", 4}, 28: {"ct_status", 4},
	38: {"fib_addrtype", 4}, 41: {"ifname", 16},
}

// keyTypes splits a set's key type into its parts, first part first.
func keyTypes(magic uint32) []uint32 {
	var parts []uint32
	for ; magic != 0; magic >>= 6 {
		parts = append([]uint32{magic & 0x3f}, parts...)
	}
	return parts
}

func typeName(t uint32) string {
	if nt, ok := nftTypes[t]; ok {
		return nt.name
	}
	return rules.Unsupported("type %d", t)
}

func setTypeText(s *nl.Set) string {
	var names []string
	for _, t := range keyTypes(s.KeyType) {
		names = append(names, typeName(t))
	}
	text := strings.Join(names, " . ")
	if s.Flags&unix.NFT_SET_MAP != 0 {
		if s.DataType == nl.VerdictDataType {
			text += " : verdict"
		} else {
			text += " : " + concatTypeName(s.DataType)
		}
	}
	return text
}

// concatTypeName names a possibly concatenated datatype
// ("ipv4_addr . inet_service" for the data of kube-proxy 1.36's numgen
// DNAT maps).
func concatTypeName(magic uint32) string {
	var names []string
	for _, t := range keyTypes(magic) {
		names = append(names, typeName(t))
	}
	if len(names) == 0 {
		return typeName(magic)
	}
	return strings.Join(names, " . ")
}

func SetModel(s *nl.Set) rules.Set {
	m := rules.Set{Name: s.Name, Map: s.Flags&unix.NFT_SET_MAP != 0, Type: setTypeText(s), Comment: s.Comment, Size: s.Size, NotRead: s.NotRead}
	for _, f := range []struct {
		bit  uint32
		name string
	}{{unix.NFT_SET_CONSTANT, "constant"}, {unix.NFT_SET_INTERVAL, "interval"}, {unix.NFT_SET_TIMEOUT, "timeout"}, {unix.NFT_SET_EVAL, "dynamic"}} {
		if s.Flags&f.bit != 0 {
			m.Flags = append(m.Flags, f.name)
		}
	}
	if s.Flags&unix.NFT_SET_OBJECT != 0 {
		m.Flags = append(m.Flags, rules.Unsupported("object map"))
	}
	if s.TimeoutMS != 0 {
		m.Timeout = duration(s.TimeoutMS)
	}
	m.Elements = elementTexts(s)
	return m
}

func duration(ms uint64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

// elementTexts renders a set's elements in nft syntax, interval sets as
// prefixes or ranges.
func elementTexts(s *nl.Set) []string {
	var out []string
	if s.Flags&unix.NFT_SET_INTERVAL != 0 {
		return intervalTexts(s)
	}
	// The kernel's element order depends on hashing; key order is stable.
	elems := slices.Clone(s.Elems)
	slices.SortStableFunc(elems, func(a, b nl.Elem) int { return bytes.Compare(a.Key, b.Key) })
	for _, e := range elems {
		out = append(out, elementText(s, e, keyText(s, e.Key)))
	}
	return out
}

func elementText(s *nl.Set, e nl.Elem, key string) string {
	text := key
	if e.Comment != "" {
		text += " comment " + rules.QuoteNFT(e.Comment)
	}
	if s.Flags&unix.NFT_SET_MAP != 0 {
		switch {
		case e.Verdict != nil:
			text += " : " + verdictText(e.Verdict.Code, e.Verdict.Chain)
		default:
			text += " : " + concatText(s.DataType, e.Data)
		}
	}
	return text
}

// keyText renders a key, splitting a concatenation into its parts (each
// part padded to a 4-byte register).
func keyText(s *nl.Set, key []byte) string { return concatText(s.KeyType, key) }

// concatText renders a value of a possibly concatenated datatype, each part
// padded to a 4-byte register as the kernel stores it.
func concatText(magic uint32, b []byte) string {
	types := keyTypes(magic)
	if len(types) <= 1 {
		return valueText(typeName(magic), b)
	}
	var parts []string
	for _, t := range types {
		size := nftTypes[t].size
		if size == 0 || len(b) < size {
			return rules.Unsupported("value %x of type %s", b, concatTypeName(magic))
		}
		parts = append(parts, valueText(typeName(t), b[:size]))
		b = b[min(len(b), (size+3)/4*4):]
	}
	return strings.Join(parts, " . ")
}

// intervalTexts pairs each interval start with its end element (the end is
// exclusive) and prints a prefix when the range is one, else a-b.
func intervalTexts(s *nl.Set) []string {
	if s.Flags&nl.SetConcat != 0 || len(keyTypes(s.KeyType)) != 1 {
		return []string{rules.Unsupported("concatenated interval set %s", s.Name)}
	}
	elems := slices.Clone(s.Elems)
	slices.SortStableFunc(elems, func(a, b nl.Elem) int { return bytes.Compare(a.Key, b.Key) })
	typ := typeName(keyTypes(s.KeyType)[0])
	var out []string
	for i, e := range elems {
		if e.Flags&unix.NFT_SET_ELEM_INTERVAL_END != 0 {
			continue
		}
		last := bytes.Repeat([]byte{0xff}, len(e.Key))
		if i+1 < len(elems) && elems[i+1].Flags&unix.NFT_SET_ELEM_INTERVAL_END != 0 {
			last = minusOne(elems[i+1].Key)
		}
		out = append(out, elementText(s, e, rangeText(typ, e.Key, last)))
	}
	return out
}

func minusOne(b []byte) []byte {
	out := slices.Clone(b)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]--
		if out[i] != 0xff {
			break
		}
	}
	return out
}

func rangeText(typ string, first, last []byte) string {
	if bytes.Equal(first, last) {
		return valueText(typ, first)
	}
	if typ == "ipv4_addr" || typ == "ipv6_addr" {
		if bits, ok := prefixOf(first, last); ok {
			return fmt.Sprintf("%s/%d", valueText(typ, first), bits)
		}
	}
	return valueText(typ, first) + "-" + valueText(typ, last)
}

// prefixOf reports whether [first, last] is exactly one CIDR prefix: equal
// leading bits, then all host bits 0 in first and 1 in last.
func prefixOf(first, last []byte) (int, bool) {
	n := len(first) * 8
	bit := func(b []byte, i int) byte { return (b[i/8] >> (7 - i%8)) & 1 }
	p := 0
	for p < n && bit(first, p) == bit(last, p) {
		p++
	}
	for i := p; i < n; i++ {
		if bit(first, i) != 0 || bit(last, i) != 1 {
			return 0, false
		}
	}
	return p, true
}

var protoNames = map[byte]string{1: "icmp", 6: "tcp", 17: "udp", 58: "ipv6-icmp", 132: "sctp"}

var fibTypes = map[uint32]string{1: "unicast", 2: "local", 3: "broadcast", 4: "anycast", 5: "multicast", 6: "blackhole", 7: "unreachable", 8: "prohibit"}

// ctStates are nft's ct state bits in nft's print order.
var ctStates = []struct {
	bit  uint32
	name string
}{{1, "invalid"}, {8, "new"}, {2, "established"}, {4, "related"}, {64, "untracked"}}

// valueText renders bytes of an nft datatype as nft reads it back.
func valueText(typ string, b []byte) string {
	switch typ {
	case "ipv4_addr", "ipv6_addr":
		if a, ok := netip.AddrFromSlice(b); ok {
			return a.String()
		}
	case "inet_proto":
		if len(b) == 1 {
			if n, ok := protoNames[b[0]]; ok {
				return n
			}
			return fmt.Sprint(b[0])
		}
	case "inet_service":
		if len(b) == 2 {
			return fmt.Sprint(binary.BigEndian.Uint16(b))
		}
	case "mark", "ct_status":
		if len(b) == 4 {
			return fmt.Sprintf("0x%08x", binary.NativeEndian.Uint32(b))
		}
	case "integer":
		switch len(b) {
		case 1:
			return fmt.Sprint(b[0])
		case 2:
			return fmt.Sprint(binary.NativeEndian.Uint16(b))
		case 4:
			return fmt.Sprint(binary.NativeEndian.Uint32(b))
		case 8:
			return fmt.Sprint(binary.NativeEndian.Uint64(b))
		}
	case "ifname", "string":
		return rules.QuoteNFT(nl.Str(b))
	case "nf_proto":
		if len(b) == 1 {
			switch b[0] {
			case unix.NFPROTO_IPV4:
				return "ipv4"
			case unix.NFPROTO_IPV6:
				return "ipv6"
			}
		}
	case "fib_addrtype":
		if len(b) == 4 {
			if n, ok := fibTypes[binary.NativeEndian.Uint32(b)]; ok {
				return n
			}
		}
	case "ct_state":
		if len(b) == 4 {
			return bitNames(binary.NativeEndian.Uint32(b))
		}
	}
	return rules.Unsupported("%s value %x", typ, b)
}

func bitNames(v uint32) string {
	var names []string
	for _, s := range ctStates {
		if v&s.bit != 0 {
			names = append(names, s.name)
			v &^= s.bit
		}
	}
	if v != 0 || len(names) == 0 {
		return rules.Unsupported("ct state bits %#x", v)
	}
	return strings.Join(names, ",")
}

// Verdicts as each syntax writes them; a jump or goto is followed by its
// chain.
var (
	nftVerdicts      = map[int32]string{1: "accept", 0: "drop", unix.NFT_CONTINUE: "continue", unix.NFT_RETURN: "return", unix.NFT_JUMP: "jump ", unix.NFT_GOTO: "goto "}
	iptablesVerdicts = map[int32]string{1: "-j ACCEPT", 0: "-j DROP", unix.NFT_RETURN: "-j RETURN", unix.NFT_JUMP: "-j ", unix.NFT_GOTO: "-g "}
)

// verdictIn writes verdict code (1 NF_ACCEPT, 0 NF_DROP, or an NFT_*
// code) in the syntax of words.
func verdictIn(words map[int32]string, code int32, chain string) string {
	w, ok := words[code]
	switch {
	case !ok:
		return rules.Unsupported("verdict %d", code)
	case code == unix.NFT_JUMP || code == unix.NFT_GOTO:
		return w + chain
	}
	return w
}

func verdictText(code int32, chain string) string { return verdictIn(nftVerdicts, code, chain) }
