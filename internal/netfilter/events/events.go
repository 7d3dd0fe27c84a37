// Package events tells when the nf_tables ruleset changed, without polling:
// it joins the nftables netlink multicast group (NFNLGRP_NFTABLES), where
// the kernel announces every committed transaction in this network
// namespace with one NEWGEN message carrying the new generation id. That
// covers nftables and iptables-nft (both are nf_tables); legacy x_tables
// has no events, so callers keep polling its table info. NEWGEN also
// names the process that committed (pid and comm); each change carries
// the last few, with the systemd unit or pod they ran in.
//
// A transaction also announces each object it touched (one message per
// rule: hundreds of thousands when kube-proxy syncs 10k Services). Only
// NEWGEN matters here, so a socket filter drops the rest in the kernel;
// without the filter (it failed to attach) they are dropped here instead.
// Changes are debounced: kube-proxy rewrites in bursts, and one verify
// after the burst is what the caller wants.
package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Options tune the debounce.
type Options struct {
	// Quiet is how long the ruleset must stay still after a change before
	// it is delivered.
	Quiet time.Duration
	// MaxDelay delivers a change that never settles anyway, this long
	// after its first event (0: wait for quiet however long it takes).
	MaxDelay time.Duration
}

// Change is one debounced delivery: the ruleset moved at least once.
type Change struct {
	// Generation is the last generation id announced (0 when only an
	// overrun was seen).
	Generation uint32
	// Commits counts the transactions announced since the last delivery.
	Commits int
	// Overrun is set when the kernel dropped notifications (the socket's
	// buffer filled): something changed, how often is unknown, and so
	// who else wrote.
	Overrun bool
	// Writers are the last MaxWriters distinct processes that committed
	// since the last delivery, oldest first, each with its origin read
	// when its commit arrived; OtherWriters counts those pushed out.
	Writers      []Writer
	OtherWriters int
}

// Subscription delivers changes on C until its context ends or receiving
// fails; C is then closed and Err says why (nil after the context ended).
type Subscription struct {
	C <-chan Change
	// Filtered says the in-kernel filter is attached (only NEWGEN reaches
	// the socket).
	Filtered bool

	conn *netlink.Conn
	mu   sync.Mutex
	err  error
}

// Err is why C closed; nil while it is open or after a clean end.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// readBuffer is the socket's receive buffer: NEWGEN messages are about 40
// bytes, so this holds thousands of commits before an overrun.
const readBuffer = 256 << 10

// Subscribe joins the nftables multicast group of the calling process's
// network namespace. It fails when the kernel has no nf_tables or the
// caller lacks CAP_NET_ADMIN (joining netfilter groups needs it).
func Subscribe(ctx context.Context, opts Options) (*Subscription, error) {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, fmt.Errorf("open a netfilter netlink socket: %w", err)
	}
	if err := conn.JoinGroup(unix.NFNLGRP_NFTABLES); err != nil {
		conn.Close()
		return nil, fmt.Errorf("join the nftables multicast group (NFNLGRP_NFTABLES; needs nf_tables and CAP_NET_ADMIN): %w", err)
	}
	// A smaller buffer only means earlier overruns, which count as changes.
	_ = conn.SetReadBuffer(readBuffer)
	// Ask the kernel not to wake us for anything but NEWGEN; without the
	// filter every message is read and the rest dropped in newgen.
	filtered := conn.SetBPF(newgenFilter()) == nil

	out := make(chan Change, 1)
	raw := make(chan Change, 1)
	s := &Subscription{C: out, Filtered: filtered, conn: conn}
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		<-rctx.Done()
		conn.Close() // unblocks Receive
	}()
	go func() {
		defer cancel()
		defer close(raw)
		s.setErr(receive(rctx, conn, raw))
	}()
	go debounce(rctx, opts, raw, out)
	return s, nil
}

func (s *Subscription) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// receive reads notifications until ctx ends (nil) or a read fails for
// good, coalescing them into raw.
func receive(ctx context.Context, conn *netlink.Conn, raw chan Change) error {
	var res resolver
	for {
		msgs, err := conn.Receive()
		if ctx.Err() != nil {
			return nil
		}
		var c Change
		switch {
		case errors.Is(err, unix.ENOBUFS):
			c.Overrun = true
		case err != nil:
			return fmt.Errorf("receive nftables notifications: %w", err)
		}
		var ws []Writer
		for _, m := range msgs {
			if cm, ok := newgen(m); ok {
				c.Generation = cm.gen
				c.Commits++
				if cm.pid != 0 || cm.comm != "" {
					ws = append(ws, res.writer(cm))
				}
			}
		}
		addWriters(&c, ws)
		if c.Commits > 0 || c.Overrun {
			send(raw, c)
		}
	}
}

// send puts c on ch (capacity 1) without blocking, merging it into a
// pending change: the receiver wants "something changed since you last
// looked", not every commit.
func send(ch chan Change, c Change) {
	for {
		select {
		case ch <- c:
			return
		default:
		}
		select {
		case old := <-ch:
			c = merge(old, c)
		default:
		}
	}
}

// Merge is old followed by c, as one change: what a caller holding
// several deliveries (watch, between two verify runs) keeps, bounded as a
// delivery is.
func Merge(old, c Change) Change { return merge(old, c) }

func merge(old, c Change) Change {
	if c.Generation == 0 {
		c.Generation = old.Generation
	}
	c.Commits += old.Commits
	c.Overrun = c.Overrun || old.Overrun
	ws := c.Writers
	c.Writers, c.OtherWriters = old.Writers, old.OtherWriters+c.OtherWriters
	addWriters(&c, ws)
	return c
}
