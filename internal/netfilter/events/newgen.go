package events

import (
	"encoding/binary"
	"strings"

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

// commit is what one NEWGEN announces: the new generation id
// (NFTA_GEN_ID) and the process whose transaction made it
// (NFTA_GEN_PROC_PID, its thread id in the kernel's initial pid namespace,
// and NFTA_GEN_PROC_NAME, its comm). All three are big-endian u32 or
// strings; a NEWGEN missing one (never sent by a kernel, but the payload
// is the kernel's to shape) still counts as a commit, with a zero value.
type commit struct {
	gen  uint32
	pid  uint32
	comm string
}

// maxComm bounds a name from the payload; the kernel's comm is at most 15
// bytes (TASK_COMM_LEN).
const maxComm = 64

// newgen decodes a NEWGEN notification; ok is false for any other message.
func newgen(m netlink.Message) (c commit, ok bool) {
	if m.Header.Type != newgenType || len(m.Data) < nfgenmsgLen {
		return commit{}, false
	}
	ad, err := netlink.NewAttributeDecoder(m.Data[nfgenmsgLen:])
	if err != nil {
		return commit{}, true
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		switch {
		case ad.Type() == unix.NFTA_GEN_ID && len(ad.Bytes()) == 4:
			c.gen = ad.Uint32()
		case ad.Type() == unix.NFTA_GEN_PROC_PID && len(ad.Bytes()) == 4:
			c.pid = ad.Uint32()
		case ad.Type() == unix.NFTA_GEN_PROC_NAME:
			c.comm = ad.String()
		}
	}
	if ad.Err() != nil {
		return commit{}, true
	}
	if len(c.comm) > maxComm {
		c.comm = c.comm[:maxComm]
	}
	c.comm = strings.ToValidUTF8(c.comm, "?")
	return c, true
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
