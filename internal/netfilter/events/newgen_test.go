package events

import (
	"encoding/binary"
	"testing"
	"unicode/utf8"

	"github.com/mdlayher/netlink"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// newgenMsg builds a NEWGEN notification as the kernel lays it out.
func newgenMsg(t testing.TB, gen uint32) netlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.Uint32(unix.NFTA_GEN_ID, gen)
	ae.Uint32(unix.NFTA_GEN_PROC_PID, 42)
	ae.String(unix.NFTA_GEN_PROC_NAME, "nft")
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte{unix.NFPROTO_UNSPEC, unix.NFNETLINK_V0, 0, byte(gen)}
	return netlink.Message{Header: netlink.Header{Type: newgenType}, Data: append(hdr, attrs...)}
}

func TestNewgen(t *testing.T) {
	if c, ok := newgen(newgenMsg(t, 0x01020304)); !ok || c != (commit{gen: 0x01020304, pid: 42, comm: "nft"}) {
		t.Errorf("newgen = %+v %v, want generation 0x01020304 by pid 42 (nft)", c, ok)
	}
	other := newgenMsg(t, 7)
	other.Header.Type = netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWRULE)
	if _, ok := newgen(other); ok {
		t.Error("a NEWRULE notification counted as a commit")
	}
}

// The socket filter, run in x/net's BPF VM on datagrams as the kernel
// queues them: NEWGEN passes whole, anything else is dropped.
func TestNewgenFilter(t *testing.T) {
	vm, err := bpf.NewVM(disassemble(t, newgenFilter()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msg  netlink.Message
		pass bool
	}{
		{newgenMsg(t, 9), true},
		{netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWRULE)}, Data: make([]byte, 40)}, false},
		{netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_DELTABLE)}, Data: make([]byte, 40)}, false},
	} {
		tc.msg.Header.Length = uint32(16 + len(tc.msg.Data))
		b, err := tc.msg.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		n, err := vm.Run(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := n > 0; got != tc.pass {
			t.Errorf("type %#x: filter kept %d bytes, want pass=%v", tc.msg.Header.Type, n, tc.pass)
		}
	}
}

func disassemble(t *testing.T, raw []bpf.RawInstruction) []bpf.Instruction {
	t.Helper()
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("filter does not disassemble")
	}
	return ins
}

// FuzzNewgen feeds arbitrary payloads to the NEWGEN decoder: it must never
// panic, and only NEWGEN's type may count as a commit.
func FuzzNewgen(f *testing.F) {
	f.Add(uint16(newgenType), newgenMsg(f, 5).Data)
	f.Add(uint16(newgenType), []byte{0, 0, 0})
	f.Add(uint16(newgenType), []byte{0, 0, 0, 0, 8, 0, 1, 0, 0, 0})
	f.Add(uint16(0x0a06), []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, typ uint16, data []byte) {
		c, ok := newgen(netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(typ)}, Data: data})
		if ok && netlink.HeaderType(typ) != newgenType {
			t.Fatalf("type %#x counted as NEWGEN", typ)
		}
		if len(c.comm) > maxComm || !utf8.ValidString(c.comm) {
			t.Fatalf("comm %q: longer than %d bytes or not UTF-8", c.comm, maxComm)
		}
	})
}
