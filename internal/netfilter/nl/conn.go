// Package nl is the netfilter netlink transport and dump decoding: an own
// socket that offers the kernel 64 KiB per read (see Conn), rule dumps one
// chain at a time over parallel sockets (DumpChainRules), decoders of the
// table, chain, set, element and rule messages and of each rule expression
// into plain values (google/nftables/expr types where they hold the data),
// and an in-place walk that finds only an iptables-nft rule's jump and
// comment (XtJumpComment). It knows no text: nfttext renders what it
// decodes.
package nl

import (
	"math"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
)

// Conn is a netfilter netlink socket for dumps: nlsock's bounded socket,
// which exists for speed as well as bounds: the kernel sizes each dump
// chunk by the largest buffer the reader has offered, and resumes a rule
// dump by walking every rule before the resume point, so a reader offering
// one page per read (mdlayher/netlink does) makes a 5,000-service dump
// quadratic. Offering 64 KiB, as nft does, gives 32 KiB chunks.
type Conn struct{ s *nlsock.Conn }

// ErrDumpInterrupted says the ruleset changed during a dump.
var ErrDumpInterrupted = nlsock.ErrDumpInterrupted

func Dial() (*Conn, error) {
	s, err := nlsock.Dial(unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, err
	}
	return &Conn{s}, nil
}

func (c *Conn) Close() error { return c.s.Close() }

// Execute sends one nf_tables request and passes each reply (all messages
// of a dump, or the single reply of a get) to each. A message's Data is
// only valid during the call: the read buffer is reused. A dump has no cap
// of messages here: its size is the ruleset's, which the readers bound by
// what they keep.
func (c *Conn) Execute(msgType uint16, flags netlink.HeaderFlags, family byte, reqAttrs []netlink.Attribute, each func(netlink.Message) error) error {
	payload := []byte{family, unix.NFNETLINK_V0, 0, 0}
	if len(reqAttrs) > 0 {
		b, err := netlink.MarshalAttributes(reqAttrs)
		if err != nil {
			return err
		}
		payload = append(payload, b...)
	}
	return c.s.Request(unix.NFNL_SUBSYS_NFTABLES<<8|msgType, uint16(flags), payload, math.MaxInt, func(typ uint16, data []byte) error {
		return each(netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(typ)}, Data: data})
	})
}
