package prove

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
)

// cluster is watch's link to its Node object: offer hands the publisher
// each stored result's state, heartbeat says which lastHeartbeatTime the
// Node holds (zero: none written since watch started), staleAfter how
// long readers trust it.
type cluster struct {
	offer      func(proof.State)
	heartbeat  func() time.Time
	staleAfter time.Duration
}

// clusterPublisher starts the Node condition's publisher for c's host,
// ending with ctx, renewing the heartbeat at every full verify (refresh).
// With verify.node_condition off (or --no-status, which stores nothing)
// it does nothing. The publisher has its own goroutine: an API server
// that is slow or gone costs watch nothing but a journal line.
func clusterPublisher(ctx context.Context, c *Command, refresh time.Duration) cluster {
	if !c.NodeCondition || c.NoStatus {
		return cluster{offer: func(proof.State) {}}
	}
	o := clusterOptions
	o.Log, o.Distribution, o.Refresh = c.Progress, distro.Find(c.Root, c.Distribution).Kind, refresh
	p := proof.NewPublisher(c.Root, o)
	go p.Run(ctx)
	return cluster{offer: p.Offer, heartbeat: p.Heartbeat, staleAfter: o.StaleAfter()}
}

// clusterOptions is the publisher's schedule: its defaults, which tests
// shorten.
var clusterOptions proof.PublishOptions

// onceBudget bounds verify's one write of the Node condition: an API
// server that is gone costs the verify unit at most this.
const onceBudget = 10 * time.Second

// writeNode writes st to the Node condition once, within onceBudget: the
// verify command's write on a node where no watch runs. A failed write is
// a note on c.Progress, never verify's failure.
func (c *Command) writeNode(ctx context.Context, st proof.State) {
	log := c.Progress
	if log == nil {
		log = func(string) {}
	}
	wctx, cancel := context.WithTimeout(ctx, onceBudget)
	defer cancel()
	err := proof.WriteOnce(wctx, c.Root, distro.Find(c.Root, c.Distribution).Kind, st, log)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No kubelet credentials: RKE2 has not joined this node (or this
		// is no RKE2 node); there is no Node to write, which is no news.
	case err != nil:
		log(fmt.Sprintf("note: the Node condition %s was not written (the result stands; watch or the next verify writes it): %v", proof.ConditionType, err))
	}
}

// watchRuns says a watch beat in the last two heartbeats, by the
// heartbeat check judges (a link is no heartbeat).
func watchRuns(root hostfs.Root) bool {
	beat, err := proof.LastBeat(root)
	return err == nil && time.Since(beat) < 2*hostfs.WatchHeartbeatEvery
}
