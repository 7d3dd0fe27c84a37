package nfttext

// The nft statements with their own syntax: fib, nat, masquerade, reject,
// dynamic set updates and limits.

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func fibField(e *expr.Fib) regVal {
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{e.FlagSADDR, "saddr"}, {e.FlagDADDR, "daddr"}, {e.FlagMARK, "mark"}, {e.FlagIIF, "iif"}, {e.FlagOIF, "oif"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	text := "fib " + strings.Join(flags, " . ")
	switch {
	case e.ResultADDRTYPE:
		return regVal{text: text + " type", typ: "fib_addrtype", size: 4, full: 4}
	case e.ResultOIFNAME:
		return regVal{text: text + " oifname", typ: "ifname", size: 16, full: 16}
	}
	return regVal{text: rules.Unsupported("fib result"), size: 4}
}

func (d *nftDecompiler) nat(e *expr.NAT) {
	kind := map[expr.NATType]string{expr.NATTypeDestNAT: "dnat", expr.NATTypeSourceNAT: "snat"}[e.Type]
	if kind == "" || e.RegAddrMin == 0 || e.Prefix {
		d.emit(rules.Unsupported("nat type %d", e.Type))
		return
	}
	addr := d.get(e.RegAddrMin)
	if addr.parts == 2 {
		d.natConcat(kind, e, addr)
		return
	}
	text := d.addrText(addr)
	if e.RegAddrMax != 0 && e.RegAddrMax != e.RegAddrMin {
		text += "-" + d.addrText(d.get(e.RegAddrMax))
	}
	if e.RegProtoMin != 0 {
		if d.fam == unix.NFPROTO_IPV6 && addr.imm != nil {
			text = "[" + text + "]"
		}
		text += ":" + d.portText(e.RegProtoMin, e.RegProtoMax)
	}
	d.emit(kind + " to " + text + natFlags(e.Random, e.FullyRandom, e.Persistent))
}

// natConcat renders "dnat ip to <map>" where one map lookup yields address
// and port together (kube-proxy >= 1.36: "dnat ip addr . port to numgen
// random mod N map { i : addr . port }"): the port register is the one
// right after the address in the same lookup result.
func (d *nftDecompiler) natConcat(kind string, e *expr.NAT, addr regVal) {
	famWord, addrSlots := "ip", 1
	if d.fam == unix.NFPROTO_IPV6 {
		famWord, addrSlots = "ip6", 4
	}
	if e.RegProtoMin == 0 || slot(e.RegProtoMin) != slot(e.RegAddrMin)+addrSlots ||
		(e.RegAddrMax != 0 && e.RegAddrMax != e.RegAddrMin) || (e.RegProtoMax != 0 && e.RegProtoMax != e.RegProtoMin) {
		d.emit(rules.Unsupported("%s from a concatenated %s without its port right after the address", kind, addr.typ))
		return
	}
	d.emit(kind + " " + famWord + " to " + addr.text + natFlags(e.Random, e.FullyRandom, e.Persistent))
}

func (d *nftDecompiler) addrText(v regVal) string {
	if v.imm == nil {
		return v.text
	}
	if a, ok := netip.AddrFromSlice(v.imm); ok {
		return a.String()
	}
	return rules.Unsupported("nat address %x", v.imm)
}

func (d *nftDecompiler) portText(minReg, maxReg uint32) string {
	port := func(reg uint32) string {
		v := d.get(reg)
		if v.imm == nil {
			return v.text
		}
		return valueText("inet_service", v.imm[:min(2, len(v.imm))])
	}
	text := port(minReg)
	if maxReg != 0 && maxReg != minReg {
		text += "-" + port(maxReg)
	}
	return text
}

func natFlags(random, fully, persistent bool) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{random, "random"}, {fully, "fully-random"}, {persistent, "persistent"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, ",")
}

var (
	icmpCodes  = map[uint8]string{0: "net-unreachable", 1: "host-unreachable", 2: "prot-unreachable", 3: "port-unreachable", 9: "net-prohibited", 10: "host-prohibited", 13: "admin-prohibited"}
	icmp6Codes = map[uint8]string{0: "no-route", 1: "admin-prohibited", 3: "addr-unreachable", 4: "port-unreachable", 5: "policy-fail", 6: "reject-route"}
	icmpxCodes = map[uint8]string{0: "no-route", 1: "port-unreachable", 2: "host-unreachable", 3: "admin-prohibited"}
)

func rejectText(fam byte, e *expr.Reject) string {
	switch e.Type {
	case unix.NFT_REJECT_TCP_RST:
		return "reject with tcp reset"
	case unix.NFT_REJECT_ICMPX_UNREACH:
		if n, ok := icmpxCodes[e.Code]; ok {
			return "reject with icmpx " + n
		}
	case unix.NFT_REJECT_ICMP_UNREACH:
		if fam == unix.NFPROTO_IPV6 {
			if e.Code == 4 {
				return "reject"
			}
			if n, ok := icmp6Codes[e.Code]; ok {
				return "reject with icmpv6 " + n
			}
		} else {
			if e.Code == 3 {
				return "reject"
			}
			if n, ok := icmpCodes[e.Code]; ok {
				return "reject with icmp " + n
			}
		}
	}
	return rules.Unsupported("reject type %d code %d", e.Type, e.Code)
}

func (d *nftDecompiler) dynset(e *expr.Dynset) {
	s := d.lookup(e.SetName)
	if s == nil || len(e.Exprs) > 0 || e.SrcRegData != 0 {
		d.emit(rules.Unsupported("dynset on %s", e.SetName))
		return
	}
	op := map[uint32]string{unix.NFT_DYNSET_OP_ADD: "add", unix.NFT_DYNSET_OP_UPDATE: "update", 2: "delete"}[e.Operation]
	key := d.keyText(e.SrcRegKey, int(s.KeyLen))
	if e.Timeout != 0 {
		key += " timeout " + duration(uint64(e.Timeout.Milliseconds()))
	}
	d.emit(fmt.Sprintf("%s @%s { %s }", op, s.Name, key))
}

func limitText(e *expr.Limit) string {
	unit := map[expr.LimitTime]string{expr.LimitTimeSecond: "second", expr.LimitTimeMinute: "minute", expr.LimitTimeHour: "hour", expr.LimitTimeDay: "day", expr.LimitTimeWeek: "week"}[e.Unit]
	if unit == "" || e.Type != expr.LimitTypePkts {
		return rules.Unsupported("limit type %d unit %d", e.Type, e.Unit)
	}
	text := "limit rate "
	if e.Over {
		text += "over "
	}
	text += fmt.Sprintf("%d/%s", e.Rate, unit)
	if e.Burst != 0 {
		text += fmt.Sprintf(" burst %d packets", e.Burst)
	}
	return text
}
