package prove

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Why no writer is known: watch names a writer only from nf_tables change
// events, which legacy x_tables never sends.
const (
	UnknownLegacy  = "iptables-legacy sends no change events"
	UnknownPolling = "polling: no nftables change events"
	UnknownOverrun = "the kernel dropped change events"
	UnknownNone    = "no nf_tables commit before the run that found it"
)

// Cause is who changed the rules before a verify run, as far as watch
// can tell: the writers of the nf_tables commits since the previous run.
type Cause struct {
	// Writers are the last processes that committed, oldest first
	// (events.MaxWriters at most); Others counts the ones left out.
	Writers []events.Writer
	Others  int
	// Unknown says why no writer is known, when Writers is empty.
	Unknown string
}

// causeOf is the cause of a run woken by the changes in ch; events says
// whether watch had nf_tables events then (polling names no writer).
func causeOf(ch events.Change, evented bool) Cause {
	switch {
	case len(ch.Writers) > 0:
		return Cause{Writers: ch.Writers, Others: ch.OtherWriters}
	case !evented:
		return Cause{Unknown: UnknownPolling}
	case ch.Overrun:
		return Cause{Unknown: UnknownOverrun}
	}
	return Cause{Unknown: UnknownNone}
}

// forBackend is c for a run that judged be: legacy's changes come with no
// events, so any nf_tables writer seen is not what changed its rules.
func (c Cause) forBackend(be backend.Backend) Cause {
	if be == backend.IptablesLegacy {
		return Cause{Unknown: UnknownLegacy}
	}
	return c
}

// Last is the writer that committed last, if any.
func (c Cause) Last() (events.Writer, bool) {
	if len(c.Writers) == 0 {
		return events.Writer{}, false
	}
	return c.Writers[len(c.Writers)-1], true
}

// mark puts the cause's last writer, or why none is known, on r: the
// writer status.json, the drift textfile and the Node condition name.
func (c Cause) mark(r *verify.Result) {
	if w, ok := c.Last(); ok {
		r.Writer, r.WriterUnknown = &w, ""
		return
	}
	r.Writer, r.WriterUnknown = nil, c.Unknown
}

// String is the cause for a journal line, last writer first:
// "changed by 1234 (nft, exited) and 99 (kube-proxy, pod U container C)".
func (c Cause) String() string {
	if len(c.Writers) == 0 {
		return "writer unknown (" + c.Unknown + ")"
	}
	var ws []string
	for i := len(c.Writers) - 1; i >= 0; i-- {
		ws = append(ws, c.Writers[i].String())
	}
	s := "changed by " + strings.Join(ws, ", ")
	if c.Others > 0 {
		s += fmt.Sprintf(" and %d more", c.Others)
	}
	return s
}
