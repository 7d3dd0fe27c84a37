package events

import (
	"fmt"
	"slices"
)

// MaxWriters bounds the writers a Change names: a burst of commits by
// many processes (a script running iptables-nft per rule) keeps the last
// ones and counts the rest.
const MaxWriters = 8

// Writer is a process that committed changes, as the kernel named it in
// its NEWGEN, and where it ran (resolved when its first commit arrived).
type Writer struct {
	PID  uint32 `json:"pid"`
	Comm string `json:"comm"`
	Origin
	// Commits counts this process's transactions in the delivery.
	Commits int `json:"commits"`
}

// same says whether w and o are one process: the pid and the name, since
// a pid can be reused.
func (w Writer) same(o Writer) bool { return w.PID == o.PID && w.Comm == o.Comm }

// addWriters appends ws to c's writers, oldest first: a process already
// there moves to the end with its commits added, and the oldest beyond
// MaxWriters are dropped into OtherWriters.
func addWriters(c *Change, ws []Writer) {
	out := slices.Clone(c.Writers)
	for _, w := range ws {
		if i := slices.IndexFunc(out, w.same); i >= 0 {
			old := out[i]
			out = slices.Delete(out, i, i+1)
			w.Commits += old.Commits
			if !old.Exited {
				// The earlier resolution saw it alive; keep that.
				w.Origin = old.Origin
			}
		}
		out = append(out, w)
	}
	if n := len(out) - MaxWriters; n > 0 {
		out = slices.Delete(out, 0, n)
		c.OtherWriters += n
	}
	c.Writers = out
}

// resolver resolves a writer's origin once per run of commits by the same
// process: a daemon committing thousands of times in a row reads its
// cgroup once.
type resolver struct {
	last Writer
	ok   bool
}

func (r *resolver) writer(cm commit) Writer {
	w := Writer{PID: cm.pid, Comm: cm.comm, Commits: 1}
	if r.ok && r.last.same(w) && !r.last.Exited {
		w.Origin = r.last.Origin
		return w
	}
	o, err := originOf(cm.pid)
	if err != nil {
		o = Origin{} // unreadable: the pid and name still say who
	}
	w.Origin = o
	r.last, r.ok = w, true
	return w
}

// String is the writer for a journal line: "1234 (nft, exited)".
func (w Writer) String() string {
	return fmt.Sprintf("%d (%s, %s)", w.PID, w.Comm, w.Origin)
}
