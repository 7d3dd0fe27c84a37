package nl_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nfttext"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
)

// xtMessage builds an iptables-nft rule message of table nat, chain
// KUBE-SERVICES: a comment match, then a jump to chain KUBE-NODEPORTS.
func xtMessage(tb testing.TB, comment string) []byte {
	tb.Helper()
	info := make([]byte, 256)
	copy(info, comment)
	marshal := func(as []netlink.Attribute) []byte {
		b, err := netlink.MarshalAttributes(as)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	expr := func(name string, data []netlink.Attribute) netlink.Attribute {
		return netlink.Attribute{Type: unix.NLA_F_NESTED | 1, Data: marshal([]netlink.Attribute{
			{Type: unix.NFTA_EXPR_NAME, Data: append([]byte(name), 0)},
			{Type: unix.NFTA_EXPR_DATA | netlink.Nested, Data: marshal(data)},
		})}
	}
	verdict := marshal([]netlink.Attribute{
		{Type: unix.NFTA_VERDICT_CODE, Data: binary.BigEndian.AppendUint32(nil, jumpCode)},
		{Type: unix.NFTA_VERDICT_CHAIN, Data: []byte("KUBE-NODEPORTS\x00")},
	})
	data := marshal([]netlink.Attribute{{Type: unix.NFTA_DATA_VERDICT | netlink.Nested, Data: verdict}})
	exprs := marshal([]netlink.Attribute{
		expr("match", []netlink.Attribute{{Type: 1, Data: []byte("comment\x00")}, {Type: 2, Data: []byte{0, 0, 0, 0}}, {Type: 3, Data: info}}),
		expr("immediate", []netlink.Attribute{{Type: unix.NFTA_IMMEDIATE_DREG, Data: []byte{0, 0, 0, 0}}, {Type: unix.NFTA_IMMEDIATE_DATA | netlink.Nested, Data: data}}),
	})
	body := marshal([]netlink.Attribute{
		{Type: unix.NFTA_RULE_TABLE, Data: []byte("nat\x00")},
		{Type: unix.NFTA_RULE_CHAIN, Data: []byte("KUBE-SERVICES\x00")},
		{Type: unix.NFTA_RULE_EXPRESSIONS | netlink.Nested, Data: exprs},
	})
	return append([]byte{unix.NFPROTO_IPV4, 0, 0, 0}, body...)
}

// jumpCode is NFT_JUMP (-3) as the kernel sends it, a big-endian u32.
var jumpCode = func() uint32 { c := int32(unix.NFT_JUMP); return uint32(c) }()

var shallowChains = map[string]bool{"KUBE-SERVICES": true, "KUBE-NODEPORTS": true, "KUBE-MARK-MASQ": true}

func isShallowChain(c string) bool { return shallowChains[c] }

func TestXtJumpComment(t *testing.T) {
	const comment = `kubernetes service "nodeports"; NOTE: this must be the last rule`
	msg := netlink.Message{Data: xtMessage(t, comment)}
	jump, got, err := nl.XtJumpComment(msg, "nat", "KUBE-SERVICES", isShallowChain)
	if err != nil {
		t.Fatal(err)
	}
	if jump != "KUBE-NODEPORTS" || got != comment {
		t.Errorf("jump %q comment %q, want KUBE-NODEPORTS and %q", jump, got, comment)
	}
	if jump, _, _ := nl.XtJumpComment(msg, "nat", "KUBE-SERVICES", func(string) bool { return false }); jump != "" {
		t.Errorf("jump %q to a chain the table does not have", jump)
	}
	if _, _, err := nl.XtJumpComment(msg, "nat", "KUBE-NODEPORTS", isShallowChain); err == nil {
		t.Error("a rule of another chain was taken")
	}
	if _, _, err := nl.XtJumpComment(msg, "filter", "KUBE-SERVICES", isShallowChain); err == nil {
		t.Error("a rule of another table was taken")
	}
}

// saneNames reports whether every chain and extension name the rule
// renders is one word: only then does iptsave.Rule read its -j target
// back whole (chain names with spaces break the text, not the shallow
// read).
func saneNames(r nl.Rule) bool {
	ok := func(s string) bool {
		return s != "" && !strings.ContainsAny(s, " \t\n\"'\\")
	}
	for _, e := range r.Exprs {
		switch x := nl.DecodeExpr(r.Family, e).(type) {
		case nl.Xt:
			if !ok(x.Name) {
				return false
			}
		case nl.Immediate:
			if x.Verdict != nil && x.Verdict.Chain != "" && !ok(x.Verdict.Chain) {
				return false
			}
		}
	}
	return true
}

// FuzzXtJumpComment: for any rule message, the shallow walk never panics
// and gives the Jump and Comment the full read (nfttext.IptablesRule)
// gives.
func FuzzXtJumpComment(f *testing.F) {
	f.Add(xtMessage(f, "default/kubernetes:https cluster IP"))
	f.Add(xtMessage(f, `a "quoted" \ comment`))
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Data: data}
		nr, err := nl.DecodeRule(m)
		jump, comment, serr := nl.XtJumpComment(m, nr.Table, nr.Chain, isShallowChain)
		if err != nil || serr != nil || !saneNames(nr) {
			return
		}
		full := nfttext.IptablesRule(nr, isShallowChain)
		if strings.Contains(full.Text, "UNSUPPORTED") {
			return
		}
		if jump != full.Jump || comment != full.Comment {
			t.Errorf("shallow jump %q comment %q, full %q %q (%s)", jump, comment, full.Jump, full.Comment, full.Text)
		}
	})
}
