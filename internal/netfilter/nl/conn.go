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
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Conn is a minimal netfilter netlink socket for dumps. It exists for
// speed: the kernel sizes each dump chunk by the largest buffer the reader
// has offered, and resumes a rule dump by walking every rule before the
// resume point, so a reader offering one page per read (mdlayher/netlink
// does) makes a 5,000-service dump quadratic. Offering 64 KiB, as nft
// does, gives 32 KiB chunks.
type Conn struct {
	fd  int
	seq uint32
	buf []byte
}

// ErrDumpInterrupted says the ruleset changed during a dump.
var ErrDumpInterrupted = errors.New("the ruleset changed during the dump")

func Dial() (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Conn{fd: fd, buf: make([]byte, 64*1024+unix.Getpagesize())}, nil
}

func (c *Conn) Close() error { return unix.Close(c.fd) }

// Execute sends one request and passes each reply (all messages of a
// dump, or the single reply of a get) to each. A message's Data is only
// valid during the call: the read buffer is reused.
func (c *Conn) Execute(msgType uint16, flags netlink.HeaderFlags, family byte, reqAttrs []netlink.Attribute, each func(netlink.Message) error) error {
	data := []byte{family, unix.NFNETLINK_V0, 0, 0}
	if len(reqAttrs) > 0 {
		b, err := netlink.MarshalAttributes(reqAttrs)
		if err != nil {
			return err
		}
		data = append(data, b...)
	}
	c.seq++
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(data))
	binary.NativeEndian.PutUint32(req[0:], uint32(unix.NLMSG_HDRLEN+len(data)))
	binary.NativeEndian.PutUint16(req[4:], unix.NFNL_SUBSYS_NFTABLES<<8|msgType)
	binary.NativeEndian.PutUint16(req[6:], uint16(netlink.Request|flags))
	binary.NativeEndian.PutUint32(req[8:], c.seq)
	req = append(req, data...)
	if err := unix.Sendto(c.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	dump := flags&netlink.Dump != 0
	for {
		n, _, err := unix.Recvfrom(c.fd, c.buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(c.buf[:n])
		if err != nil {
			return fmt.Errorf("parsing a netlink reply: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != c.seq {
				continue
			}
			if m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
				return ErrDumpInterrupted
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return errors.New("short netlink error message")
				}
				if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
					return unix.Errno(errno)
				}
				return nil
			}
			err := each(netlink.Message{
				Header: netlink.Header{Length: m.Header.Len, Type: netlink.HeaderType(m.Header.Type), Flags: netlink.HeaderFlags(m.Header.Flags), Sequence: m.Header.Seq, PID: m.Header.Pid},
				Data:   m.Data,
			})
			if err != nil {
				// Drain the rest of the dump so the socket stays usable.
				c.drain()
				return err
			}
			if !dump {
				return nil
			}
		}
	}
}

// drain reads and drops replies until the current request's dump ends.
func (c *Conn) drain() {
	for {
		n, _, err := unix.Recvfrom(c.fd, c.buf, 0)
		if err != nil {
			return
		}
		msgs, err := syscall.ParseNetlinkMessage(c.buf[:n])
		if err != nil {
			return
		}
		for _, m := range msgs {
			if m.Header.Seq == c.seq && (m.Header.Type == unix.NLMSG_DONE || m.Header.Type == unix.NLMSG_ERROR) {
				return
			}
		}
	}
}
