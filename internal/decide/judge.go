package decide

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// Support levels of a Judgement, as certify prints and records them.
const (
	Supported   = "runnable"
	Unconfirmed = "unconfirmed"
	NotRunnable = "not-runnable"
)

// Judgement is one backend as the decision judges it on these facts (the
// cluster's side of nftables mode included), for an image's certificate.
type Judgement struct {
	Backend backend.Backend
	// Support is Supported, Unconfirmed (nothing rules it out, but not
	// everything could be read) or NotRunnable.
	Support string
	// Why says what rules it out or leaves it unconfirmed ("" when runnable).
	Why string
	// Missing are the kernel features the facts show missing, each with
	// the modules that would provide it: what an image must add.
	Missing []backend.Requirement
}

// Judge judges every backend in backend.All's order, as the decision
// does, and lists each one's missing kernel features, not only the first.
func Judge(f facts.Facts) []Judgement {
	caps := assess(f)
	v := kernelView{k: f.Kernel, m: f.Modules}
	out := make([]Judgement, 0, len(backend.All))
	for _, b := range backend.All {
		c := caps[b]
		j := Judgement{Backend: b, Support: Supported, Why: c.why}
		switch c.support {
		case unconfirmed:
			j.Support = Unconfirmed
		case unsupported:
			j.Support = NotRunnable
		default:
			j.Why = ""
		}
		if j.Support != Supported {
			j.Missing = v.missing(b)
		}
		out = append(out, j)
	}
	return out
}

// missing lists b's kernel features the facts show missing: its
// requirements, and for nftables mode the expressions it uses (judged by
// the kernel config only, as backend does).
func (v kernelView) missing(b backend.Backend) []backend.Requirement {
	var out []backend.Requirement
	for _, req := range b.RequirementsOn(v.k.Major, v.k.Minor) {
		if c := v.feature(req); c.support == unsupported && c.kernel {
			out = append(out, req)
		}
	}
	if b != backend.NFTables {
		return out
	}
	for _, req := range nftablesModeOptions {
		if c := v.feature(req); c.support == unsupported && c.kernel && !c.onlyLists {
			out = append(out, req)
		}
	}
	return out
}
