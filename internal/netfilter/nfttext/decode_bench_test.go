package nfttext

import (
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
)

// BenchmarkDecode measures nl's message decoders without a kernel, so a
// change to them can be compared by bench/revs.sh on any machine: a rule
// (sampleRule's payload, cmp, meta, counter and immediate) decoded and
// rendered in both syntaxes, and a table, a chain and a set message as a
// dump sends them. BenchmarkReaders in package netfilter measures the
// same decoders in a whole read against a real kernel.
func BenchmarkDecode(b *testing.B) {
	rule := netlink.Message{Data: sampleRule(b)}
	for name, render := range map[string]func(nl.Rule){
		"rule-nft":      func(r nl.Rule) { _ = NFTRule(r, func(string) *nl.Set { return nil }) },
		"rule-iptables": func(r nl.Rule) { _ = IptablesRule(r, func(string) bool { return true }) },
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r, err := nl.DecodeRule(rule)
				if err != nil {
					b.Fatal(err)
				}
				render(r)
			}
		})
	}
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	hook, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_HOOK_HOOKNUM, Data: u32(0)},
		{Type: unix.NFTA_HOOK_PRIORITY, Data: u32(uint32(0xffffff9c))}, // -100, dstnat
	})
	if err != nil {
		b.Fatal(err)
	}
	objects := map[string][]netlink.Attribute{
		"table": {
			{Type: unix.NFTA_TABLE_NAME, Data: []byte("kube-proxy\x00")},
			{Type: 6, Data: commentUdata("rules for kube-proxy")}, // NFTA_TABLE_USERDATA
		},
		"chain": {
			{Type: unix.NFTA_CHAIN_TABLE, Data: []byte("kube-proxy\x00")},
			{Type: unix.NFTA_CHAIN_NAME, Data: []byte("nat-prerouting\x00")},
			{Type: unix.NLA_F_NESTED | unix.NFTA_CHAIN_HOOK, Data: hook},
			{Type: unix.NFTA_CHAIN_POLICY, Data: u32(1)},
			{Type: unix.NFTA_CHAIN_TYPE, Data: []byte("nat\x00")},
		},
		"set": {
			{Type: unix.NFTA_SET_TABLE, Data: []byte("kube-proxy\x00")},
			{Type: unix.NFTA_SET_NAME, Data: []byte("cluster-ips\x00")},
			{Type: unix.NFTA_SET_FLAGS, Data: u32(0)},
			{Type: unix.NFTA_SET_KEY_TYPE, Data: u32(7)},
			{Type: unix.NFTA_SET_KEY_LEN, Data: u32(4)},
			{Type: 0xd, Data: commentUdata("Active ClusterIPs")}, // NFTA_SET_USERDATA
		},
	}
	for name, as := range objects {
		m := netlink.Message{Data: objectMessage(b, unix.NFPROTO_IPV4, as)}
		decode := map[string]func(netlink.Message) error{
			"table": func(m netlink.Message) error { _, err := nl.DecodeTable(m); return err },
			"chain": func(m netlink.Message) error { _, err := nl.DecodeChain(m); return err },
			"set":   func(m netlink.Message) error { _, err := nl.DecodeSet(m); return err },
		}[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := decode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
