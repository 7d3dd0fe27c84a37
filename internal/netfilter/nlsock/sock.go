// Package nlsock is one bounded netlink request over a raw socket of any
// protocol (netfilter's ipset subsystem, rtnetlink, generic netlink): the
// nftables reader (internal/netfilter/nl.Conn is built on it) and the
// readers of kube-proxy's ipvs footprint (ipset, link, ipvs) share it:
// every read has a deadline, a dump that runs past a cap of messages is an
// error rather than memory, a message's bytes are only lent to the
// callback, and a callback's error drains the dump so the socket can be
// used again.
package nlsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Timeout bounds each read: a kernel that never answers ends the request
// with an error instead of hanging verify or a boot step.
const Timeout = 5 * time.Second

// ErrTooMany says a dump ran past its cap of messages.
var ErrTooMany = errors.New("netlink dump over its cap of messages")

// ErrDumpInterrupted says the kernel's objects changed during the dump.
var ErrDumpInterrupted = errors.New("the dump was interrupted by a change")

// Conn is one netlink socket.
type Conn struct {
	fd  int
	seq uint32
	buf []byte
}

// Dial opens a socket of protocol proto (unix.NETLINK_NETFILTER,
// unix.NETLINK_ROUTE, unix.NETLINK_GENERIC) in the caller's network
// namespace.
func Dial(proto int) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, fmt.Errorf("opening a netlink socket (protocol %d): %w", proto, err)
	}
	tv := unix.NsecToTimeval(Timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("setting the netlink read timeout: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("binding a netlink socket: %w", err)
	}
	// 64 KiB offered per read, as nl.Conn does: the kernel sizes dump
	// chunks by the reader's buffer.
	return &Conn{fd: fd, buf: make([]byte, 64*1024+unix.Getpagesize())}, nil
}

func (c *Conn) Close() error { return unix.Close(c.fd) }

// Request sends one message (type msgType, flags besides NLM_F_REQUEST,
// payload after the netlink header) and passes each reply's type and data
// to each, at most max of them. A get ends at its one reply or its ack
// (send NLM_F_ACK for writes); a dump (NLM_F_DUMP) at NLMSG_DONE. A
// kernel error comes back as unix.Errno, wrapped.
func (c *Conn) Request(msgType, flags uint16, payload []byte, max int, each func(typ uint16, data []byte) error) error {
	c.seq++
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	binary.NativeEndian.PutUint32(req[0:], uint32(unix.NLMSG_HDRLEN+len(payload)))
	binary.NativeEndian.PutUint16(req[4:], msgType)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|flags)
	binary.NativeEndian.PutUint32(req[8:], c.seq)
	req = append(req, payload...)
	if err := unix.Sendto(c.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sending a netlink request: %w", err)
	}
	dump := flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP
	ack := flags&unix.NLM_F_ACK != 0
	seen := 0
	for {
		n, _, err := unix.Recvfrom(c.fd, c.buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("no netlink answer within %s", Timeout)
		}
		if err != nil {
			return fmt.Errorf("reading a netlink reply: %w", err)
		}
		for b := c.buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			h, data, rest, err := nextMessage(b)
			if err != nil {
				return fmt.Errorf("parsing a netlink reply: %w", err)
			}
			b = rest
			if h.Seq != c.seq {
				continue
			}
			if h.Flags&unix.NLM_F_DUMP_INTR != 0 {
				return ErrDumpInterrupted
			}
			switch h.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(data) < 4 {
					return errors.New("short netlink error message")
				}
				if errno := -int32(binary.NativeEndian.Uint32(data)); errno != 0 {
					return fmt.Errorf("netlink: %w", unix.Errno(errno))
				}
				return nil
			}
			if seen++; seen > max {
				// The socket is closed by the caller; no drain.
				return fmt.Errorf("%w (%d)", ErrTooMany, max)
			}
			if err := each(h.Type, data); err != nil {
				// Drain the rest of the dump so the socket stays usable
				// (nl's readers send several requests over one).
				c.drain()
				return err
			}
			if !dump && !ack {
				return nil
			}
		}
	}
}

// header is the part of a netlink message header Request reads.
type header struct {
	Type, Flags uint16
	Seq         uint32
}

// nextMessage splits the first netlink message off b (at least a header
// long) in place, as syscall.ParseNetlinkMessage splits them all but
// without allocating a slice per read: a 5,000-Service dump is tens of
// thousands of reads. Its header, its data and the rest of b after its
// padding; a length shorter than a header or, padded, longer than b is
// an error (EINVAL, as syscall's).
func nextMessage(b []byte) (h header, data, rest []byte, err error) {
	l := int(binary.NativeEndian.Uint32(b[0:4]))
	padded := (l + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
	if l < unix.NLMSG_HDRLEN || padded > len(b) || padded < l {
		return header{}, nil, nil, unix.EINVAL
	}
	h = header{
		Type:  binary.NativeEndian.Uint16(b[4:6]),
		Flags: binary.NativeEndian.Uint16(b[6:8]),
		Seq:   binary.NativeEndian.Uint32(b[8:12]),
	}
	return h, b[unix.NLMSG_HDRLEN:l], b[padded:], nil
}

// Attr is one netlink attribute as found in a message: Type without the
// nested and byte-order flags.
type Attr struct {
	Type  uint16
	Value []byte
}

// ParseAttrs splits b into attributes. It never reads past b: a length
// shorter than a header or longer than what is left is an error.
func ParseAttrs(b []byte) ([]Attr, error) {
	var out []Attr
	for len(b) > 0 {
		if len(b) < unix.SizeofNlAttr {
			return nil, fmt.Errorf("netlink attribute header cut short (%d bytes)", len(b))
		}
		l := int(binary.NativeEndian.Uint16(b[0:]))
		typ := binary.NativeEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofNlAttr || l > len(b) {
			return nil, fmt.Errorf("netlink attribute %d has length %d of %d bytes left", typ, l, len(b))
		}
		out = append(out, Attr{Type: typ, Value: b[unix.SizeofNlAttr:l]})
		al := (l + unix.NLA_ALIGNTO - 1) &^ (unix.NLA_ALIGNTO - 1)
		if al > len(b) {
			al = len(b)
		}
		b = b[al:]
	}
	return out, nil
}

// AppendAttr appends one attribute (type typ, flags included) with its
// padding.
func AppendAttr(b []byte, typ uint16, v []byte) []byte {
	l := unix.SizeofNlAttr + len(v)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for l%unix.NLA_ALIGNTO != 0 {
		b = append(b, 0)
		l++
	}
	return b
}

// CString is a NUL-terminated string attribute's value without the NUL.
func CString(v []byte) string {
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

// drain reads and drops replies until the current request's dump ends (or
// a read fails, the deadline included).
func (c *Conn) drain() {
	for {
		n, _, err := unix.Recvfrom(c.fd, c.buf, 0)
		if err != nil {
			return
		}
		for b := c.buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			h, _, rest, err := nextMessage(b)
			if err != nil {
				return
			}
			if h.Seq == c.seq && (h.Type == unix.NLMSG_DONE || h.Type == unix.NLMSG_ERROR) {
				return
			}
			b = rest
		}
	}
}
