package proof

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Defaults of a publisher's schedule.
const (
	// DefaultMinInterval is the least time between two writes of the same
	// facts (a fresher verified-at and heartbeat only). A changed verdict
	// is written at once. On a quiet node watch verifies every 10 minutes,
	// so this caps a flapping kube-proxy, not the normal rate.
	DefaultMinInterval = time.Minute
	// DefaultMaxBackoff caps the wait between tries while the API server
	// cannot be reached or refuses the write.
	DefaultMaxBackoff = time.Minute
	firstBackoff      = 2 * time.Second
)

// PublishOptions tune a publisher; zero fields take the defaults.
type PublishOptions struct {
	MinInterval, MaxBackoff time.Duration
	API                     kubeapi.Options
	// Distribution is the node's (RKE2 or k3s; "" counts as RKE2): whose
	// config and data-dir hold the node's name and kubelet credentials.
	Distribution distro.Kind
	// Log gets a line when writing starts failing and when it works
	// again, never one per failed try.
	Log func(string)
	// Refresh is how often the owner offers a state while nothing
	// changes (watch: its full-verify period), so how often the
	// condition's heartbeat is renewed; 0 is a publisher that writes once
	// (WriteOnce, verify at an RKE2 start). The Node's stale-after says
	// how long readers may trust a heartbeat (StaleAfter).
	Refresh time.Duration
}

// StaleAfter is what the Node's stale-after annotation says for a
// publisher of o: three renewals (one late or failed write is no
// alarm), never more than vocab.NodeStaleAfterMax, which readers cap it
// at and which a publisher writing once (no watch) says: its condition
// stands a day, as its node-feature-discovery labels do.
func (o PublishOptions) StaleAfter() time.Duration {
	if o.Refresh <= 0 {
		return vocab.NodeStaleAfterMax
	}
	return min(3*max(o.Refresh, o.MinInterval), vocab.NodeStaleAfterMax)
}

// Publisher writes the latest State to the node's Node object (Locate)
// from its own goroutine (Run), so a slow or absent API server never holds
// up watch: it is a line in the journal, never a failure.
type Publisher struct {
	root hostfs.Root
	opts PublishOptions

	mu        sync.Mutex
	pending   *State
	heartbeat time.Time // the last heartbeat written
	wake      chan struct{}

	// Run's own state.
	target     *Target
	client     *kubeapi.Client
	written    *State
	writtenAt  time.Time
	lastProof  time.Time
	transition time.Time
	failing    bool
	backoff    time.Duration
}

// NewPublisher makes a publisher for the node whose host is root. The kubelet's
// credentials are read when the first write is due, and again after a
// failure, so a node whose RKE2 has not written them yet catches up.
func NewPublisher(root hostfs.Root, o PublishOptions) *Publisher {
	if o.MinInterval <= 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	return &Publisher{root: root, opts: o, wake: make(chan struct{}, 1)}
}

// Offer hands the publisher a new state; it never blocks. Only the latest
// offer is kept: a write carries what is true now, not a backlog.
func (p *Publisher) Offer(s State) {
	p.mu.Lock()
	p.pending = &s
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Heartbeat is the lastHeartbeatTime the publisher last wrote to the
// Node (zero before its first write worked): what the cluster holds, for
// the fleet metrics, whose alert fires as the fleet view's Unknown does.
func (p *Publisher) Heartbeat() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heartbeat
}

// Run writes offered states until ctx ends.
func (p *Publisher) Run(ctx context.Context) {
	var retryAt time.Time
	for {
		p.mu.Lock()
		s := p.pending
		p.mu.Unlock()
		if s == nil {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
			continue
		}
		if at := p.due(*s, retryAt); time.Now().Before(at) {
			if !p.sleepUntil(ctx, at) {
				return
			}
			continue
		}
		if err := p.write(ctx, *s); err != nil {
			if ctx.Err() != nil {
				return
			}
			p.fail(err)
			retryAt = time.Now().Add(p.backoff)
			continue
		}
		p.succeed(s)
	}
}

// sleepUntil waits for at or a new offer; false when ctx ended.
func (p *Publisher) sleepUntil(ctx context.Context, at time.Time) bool {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-p.wake:
	case <-t.C:
	}
	return true
}

// due is when s may be written: after a failure when the backoff ends;
// a change at once; the same facts again MinInterval after the last write.
func (p *Publisher) due(s State, retryAt time.Time) time.Time {
	switch {
	case p.failing:
		return retryAt
	case p.written == nil || !same(*p.written, s):
		return time.Time{}
	}
	return p.writtenAt.Add(p.opts.MinInterval)
}

func (p *Publisher) fail(err error) {
	if !p.failing {
		p.opts.Log(fmt.Sprintf("cannot publish the Node condition %s (retrying with backoff up to %s; kube-proxy's checks go on): %v", ConditionType, p.opts.MaxBackoff, err))
	}
	p.failing = true
	p.client, p.target = nil, nil // read the credentials again: RKE2 may have renewed them
	p.backoff = min(max(2*p.backoff, firstBackoff), p.opts.MaxBackoff)
}

func (p *Publisher) succeed(s *State) {
	p.mu.Lock()
	if p.pending == s {
		p.pending = nil
	}
	p.heartbeat = s.At
	p.mu.Unlock()
	if p.failing {
		p.opts.Log(fmt.Sprintf("published the Node condition %s on node %s again", ConditionType, p.target.Node))
	}
	p.failing, p.backoff = false, 0
	p.written, p.writtenAt = s, time.Now()
}

// write puts s on the Node: the condition by a strategic-merge patch of
// nodes/NAME/status (conditions merge by type, so the kubelet's stay),
// the annotations by a merge patch of nodes/NAME.
func (p *Publisher) write(ctx context.Context, s State) error {
	if p.client == nil {
		t, err := Locate(p.root, p.opts.Distribution)
		if err != nil {
			return err
		}
		for _, n := range t.Notes {
			p.opts.Log(n)
		}
		c, err := kubeapi.New(t.Creds, p.opts.API)
		if err != nil {
			return err
		}
		p.target, p.client = &t, c
	}
	node := "/api/v1/nodes/" + url.PathEscape(p.target.Node)
	status, _ := conditionOf(s.Verdict)
	if err := p.transitionTime(ctx, node, status); err != nil {
		return err
	}
	if s.Proven {
		p.lastProof = s.At
	}
	body, err := conditionPatch(s, p.transition)
	if err == nil {
		_, err = p.client.Patch(ctx, node+"/status", kubeapi.StrategicMerge, body)
	}
	if err != nil {
		return fmt.Errorf("node %s: the condition: %w", p.target.Node, err)
	}
	if body, err = annotationPatch(s, p.lastProof, p.opts.StaleAfter()); err == nil {
		_, err = p.client.Patch(ctx, node, kubeapi.MergePatch, body)
	}
	if err != nil {
		return fmt.Errorf("node %s: the annotations: %w", p.target.Node, err)
	}
	return nil
}

// transitionTime keeps lastTransitionTime at the last change of status:
// on the first write it is read from the Node (a restarted watch must not
// reset it), later it moves when status does.
func (p *Publisher) transitionTime(ctx context.Context, node, status string) error {
	prev := ""
	if p.written != nil {
		prev, _ = conditionOf(p.written.Verdict)
	} else {
		raw, err := p.client.Get(ctx, node)
		if err != nil {
			return fmt.Errorf("node %s: %w", p.target.Node, err)
		}
		cond, err := conditionIn(raw)
		if err != nil {
			return fmt.Errorf("node %s: the API server's answer is no Node: %w", p.target.Node, err)
		}
		prev = cond.Status
		if t, err := time.Parse(time.RFC3339, cond.LastTransitionTime); err == nil {
			p.transition = t
		}
	}
	if prev != status || p.transition.IsZero() {
		p.transition = time.Now()
	}
	return nil
}

// WriteOnce writes s now, once, without the publisher's schedule: verify's
// one run on a node where no watch runs, of distribution kind. ctx bounds it.
func WriteOnce(ctx context.Context, root hostfs.Root, kind distro.Kind, s State, log func(string)) error {
	p := NewPublisher(root, PublishOptions{Log: log, API: kubeapi.Options{Attempts: 2}, Distribution: kind})
	return p.write(ctx, s)
}
