package events

import (
	"encoding/binary"

	"github.com/mdlayher/netlink"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// newgenType is NEWGEN's netlink message type: nfnetlink puts the
// subsystem in the high byte and the message in the low one.
const newgenType = netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWGEN)

// nfgenmsgLen is the nfnetlink header before the attributes (family,
// version, resource id).
const nfgenmsgLen = 4

// newgen returns the generation id a NEWGEN notification announces. The
// id is NFTA_GEN_ID (big-endian u32); a NEWGEN without it (never sent by
// a kernel, but the payload is the kernel's to shape) still counts as a
// commit, with generation 0.
func newgen(m netlink.Message) (uint32, bool) {
	if m.Header.Type != newgenType || len(m.Data) < nfgenmsgLen {
		return 0, false
	}
	ad, err := netlink.NewAttributeDecoder(m.Data[nfgenmsgLen:])
	if err != nil {
		return 0, true
	}
	ad.ByteOrder = binary.BigEndian
	var gen uint32
	for ad.Next() {
		if ad.Type() == unix.NFTA_GEN_ID && len(ad.Bytes()) == 4 {
			gen = ad.Uint32()
		}
	}
	if ad.Err() != nil {
		return 0, true
	}
	return gen, true
}

// newgenFilter is a classic BPF socket filter keeping only datagrams whose
// first message is NEWGEN. The kernel sends NEWGEN in a datagram of its
// own (nf_tables_gen_notify), while a transaction's per-object
// notifications come batched in others, so this drops them all in the
// kernel. nlmsg_type sits at offset 4 in host byte order; BPF loads
// halfwords in network order, so the constant is the host bytes read
// big-endian.
func newgenFilter() []bpf.RawInstruction {
	var host [2]byte
	binary.NativeEndian.PutUint16(host[:], uint16(newgenType))
	want := uint32(binary.BigEndian.Uint16(host[:]))
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: want, SkipFalse: 1},
		bpf.RetConstant{Val: 0xffff},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		panic("events: the NEWGEN filter does not assemble: " + err.Error())
	}
	return prog
}
