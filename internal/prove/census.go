package prove

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// CensusMaxNamespaces bounds one census round of watch: a node runs 100+
// pods, each round enters at most this many namespaces (well under a
// millisecond each) and says "cannot tell" when it left some.
const CensusMaxNamespaces = 256

// censusRounds is watch's census (census.interval): one round at start
// and every interval until ctx ends, each stored as its textfile (unless
// nothing is stored) and as the value the next Node update publishes
// (last), with one journal line whenever the answer changes. take is
// census.Take on the host; tests limit it to their own processes. name
// puts the pods' names on each census taken (proof.NamePods with the
// kubelet's credentials) and returns the API requests it sent; nil names
// none.
type censusRounds struct {
	interval time.Duration
	take     func(ctx context.Context) (*census.Census, error)
	name     func(ctx context.Context, c *census.Census) (requests int)
	store    func(c *census.Census, took time.Duration, at time.Time) error
	log      func(string)

	mu   sync.Mutex
	last string // proof.LegacyFreeValue of the last census, "" before one
}

// run takes rounds until ctx ends.
func (r *censusRounds) run(ctx context.Context) {
	said, saidNames := "", ""
	for {
		start := time.Now()
		c, err := r.take(ctx)
		requests := 0
		if err == nil && r.name != nil {
			requests = r.name(ctx, c)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c = &census.Census{Schema: census.Schema, Verdict: census.Unknown, Reason: err.Error(), HeldBackBy: []census.Ref{}}
		}
		took := time.Since(start)
		value := proof.LegacyFreeValue(c)
		r.mu.Lock()
		r.last = value
		r.mu.Unlock()
		if value != said {
			r.log(fmt.Sprintf("census (%d namespaces in %s, %d API requests): %s", len(c.Namespaces), took.Round(time.Millisecond), requests, c.Sentence()))
			said = value
		}
		// Why pods go unnamed, once each time it changes: the verdict
		// stands on their UIDs either way.
		if c.PodNamesReason != saidNames {
			if c.PodNamesReason != "" {
				r.log("census: pods named by UID only: " + c.PodNamesReason)
			}
			saidNames = c.PodNamesReason
		}
		if r.store != nil {
			if err := r.store(c, took, time.Now()); err != nil {
				r.log("census metrics not written: " + err.Error())
			}
		}
		if verify.SleepCtx(ctx, r.interval) != nil {
			return
		}
	}
}

// value is the last census for the Node annotation ("" before the first).
func (r *censusRounds) value() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// startCensus starts watch's census rounds when c asks for them, and says
// how for the start line; nil when it does not run.
func startCensus(ctx context.Context, c *Command, log func(string)) (*censusRounds, string) {
	if c.CensusInterval <= 0 {
		return nil, ""
	}
	if !c.Root.IsHost() {
		return nil, "; no census under --root (it enters this machine's namespaces, not the fixture's)"
	}
	kind := distro.Find(c.Root, c.Distribution).Kind
	r := &censusRounds{interval: c.CensusInterval, log: log,
		take: func(ctx context.Context) (*census.Census, error) {
			return census.Take(ctx, census.Options{MaxNamespaces: CensusMaxNamespaces})
		},
		name: func(ctx context.Context, cen *census.Census) int {
			return proof.NamePods(ctx, c.Root, kind, cen)
		}}
	if !c.NoStatus {
		r.store = func(cen *census.Census, took time.Duration, at time.Time) error {
			return proof.WriteCensusMetrics(c.Root, c.TextfileDir, cen, took, at)
		}
	}
	go r.run(ctx)
	return r, fmt.Sprintf("; legacy-xtables census every %s", c.CensusInterval)
}

// withCensus makes every state cl offers carry r's last census (none when
// r is nil): the answer rides on the Node updates watch makes anyway, the
// invalidating ones too, so it is never dropped from one and written back
// by the next.
func (cl cluster) withCensus(r *censusRounds) cluster {
	if r == nil {
		return cl
	}
	offer := cl.offer
	cl.offer = func(s proof.State) {
		s.LegacyFree = r.value()
		offer(s)
	}
	return cl
}
