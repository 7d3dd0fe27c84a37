package prove

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Schedule is when the watch service looks and verifies, as its flags
// set it (see loopConfig).
type Schedule struct {
	Poll, Quiet, Grace, Full time.Duration
}

// Check refuses a schedule watch cannot keep: --grace 0 calls any failure
// drift, but a period of 0 would make watch spin.
func (s Schedule) Check() error {
	if s.Grace < 0 {
		return fmt.Errorf("--grace %s: must not be negative", s.Grace)
	}
	for _, p := range []struct {
		flag string
		d    time.Duration
	}{{"--poll", s.Poll}, {"--quiet", s.Quiet}, {"--full", s.Full}} {
		if p.d <= 0 {
			return fmt.Errorf("%s %s: must be positive", p.flag, p.d)
		}
	}
	return nil
}

// Watch is the watch service on c's host until ctx ends or SIGTERM or
// SIGINT comes: verify at start (waiting up to c.Wait for kube-proxy's
// first sync), then again after every rule change has settled and every
// s.Full, each result stored with the drift state, and a heartbeat while
// it runs. c.Progress gets the journal lines. Its errors are those of the
// first look at the host, before watching starts: a *verify.FlagError for
// a claim that does not parse, verify.ErrOff when the plan turned the
// tool off (nothing to watch), or a host verify cannot judge.
func (c *Command) Watch(ctx context.Context, s Schedule) error {
	// systemd stops the service with SIGTERM; Ctrl-C stops it by hand.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := c.Progress
	// One reader for the stamps and the runs, verify's (shallow, skipping
	// per-Service chains): only the stamps run while idle, and a re-verify
	// costs what verify costs. The copy leaves the caller's c as it was.
	reader := verify.NewReader(c.Root)
	own := *c
	own.Reader = reader
	// Every full verify renews the NFD labels; three missed ones (a watch
	// that died) let them expire.
	own.FeatureTTL = 3 * s.Full
	c = &own
	// Resolve the expectation now so "backend: off" ends watch at once.
	if opts, unknown, err := verify.ForHost(c.Host); err != nil {
		return err
	} else if unknown == nil && opts.Expect == "" {
		return verify.ErrOff
	}
	var lastProof time.Time
	kind := distro.Find(c.Root, c.Distribution).Kind
	rounds, censusHow := startCensus(ctx, c, log)
	toCluster := clusterPublisher(ctx, c, s.Full).withCensus(rounds)
	cfg := loopConfig{Log: log, Poll: s.Poll, Quiet: s.Quiet, Grace: s.Grace, Full: s.Full,
		// A stamp that never settles is still checked after a minute.
		MaxDelay: DefaultMaxDelay,
		Verify: func(ctx context.Context, first bool) (*verify.Result, error) {
			return verifyOnce(ctx, c, first, toCluster)
		},
		Publish: func(res *verify.Result, drifting bool, transitions int) error {
			return publishRun(c, kind, res, drifting, transitions, &lastProof, toCluster)
		},
	}
	if !c.NoStatus {
		cfg.Heartbeat = beatLogger(c, log)
	}
	how := wakeOn(ctx, c, reader, &cfg)
	log(fmt.Sprintf("started: %s; verify after %s of quiet or every %s, drift after %s%s", how, s.Quiet, s.Full, s.Grace, censusHow))
	if err := loop(ctx, cfg); err != nil {
		return err
	}
	log("stopped")
	return nil
}

// publishRun stores one result: status.json, watch's textfiles, and the
// Node condition's state, all from the one state of the run. Its Proven
// moves *lastProof, so the fleet metric's last proof and the Node's
// verified-at annotation are one judgement. The fleet metrics carry the
// heartbeat the Node holds, so their alert and the fleet view call the
// node stale together.
func publishRun(c *Command, kind distro.Kind, res *verify.Result, drifting bool, transitions int, lastProof *time.Time, toCluster cluster) error {
	if c.NoStatus {
		return nil
	}
	s := proof.Of(c.Root, res, "", time.Now())
	err := c.store(&s)
	if s.Proven {
		*lastProof = s.At
	}
	err = errors.Join(err, proof.WriteDriftMetrics(c.Root, c.TextfileDir, drifting, transitions, res.Writer),
		proof.WriteFleetMetrics(c.Root, c.TextfileDir, func() proof.Fleet {
			fl := s.Fleet(kind, *lastProof)
			if toCluster.heartbeat != nil {
				fl.Heartbeat, fl.StaleAfter = toCluster.heartbeat(), toCluster.staleAfter
			}
			return fl
		}))
	toCluster.offer(s)
	return err
}

// verifyOnce is one of watch's verify runs. Only the first waits for
// kube-proxy's first sync and says what it waits for (and which host
// files it could not read); the plan, RKE2's config and the CNI are read
// at every run, since apply rewrites the plan when RKE2 restarts with
// another backend and the operator may move the CNI between runs. A run
// without a result is stored as such, and toCluster told.
func verifyOnce(ctx context.Context, c *Command, first bool, toCluster cluster) (*verify.Result, error) {
	var wait time.Duration
	var progress func(string)
	if first {
		wait, progress = c.Wait, c.Progress
	}
	res, err := c.Verify(ctx, wait, progress)
	switch {
	case errors.Is(err, verify.ErrOff):
		return verify.CannotTell("backend: off in the config since watch started", "restart rke2-proxy-backend-watch.service"), nil
	case err != nil && ctx.Err() == nil:
		// No result this time: the last one no longer stands, nor does
		// the condition's verdict.
		st, err := c.invalidate(err)
		if st != nil {
			toCluster.offer(*st)
		}
		return nil, err
	}
	return res, err
}

// wakeOn sets how cfg learns of rule changes and says so for the log:
// nf_tables change events when it can subscribe (polling only legacy's
// stamps), otherwise every backend's stamps polled. While nf_tables is not
// loaded it polls and subscribes once the stamps show it loaded.
func wakeOn(ctx context.Context, c *Command, reader netfilter.Stamper, cfg *loopConfig) string {
	cfg.Stamp = func(ctx context.Context) string { return Stamps(ctx, reader) }
	how := fmt.Sprintf("every backend's stamp every %s", cfg.Poll)
	if !c.Root.IsHost() {
		// Under --root the netlink socket would see this machine's
		// rules, not the fixture's: poll, as verify --root does.
		return how + " (--root: no netlink events)"
	}
	subscribe := func(ctx context.Context) (*events.Subscription, error) {
		if netfilter.NFTablesAbsent(c.Root) != "" {
			return nil, nil // joining the group would load nf_tables
		}
		return events.Subscribe(ctx, events.Options{Quiet: cfg.Quiet, MaxDelay: DefaultMaxDelay})
	}
	sub, err := subscribe(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("cannot subscribe to nftables change events (%v), so polling every backend's stamp every %s instead", err, cfg.Poll)
	case sub == nil:
		cfg.Subscribe = subscribe
		return fmt.Sprintf("%s (%s: its change events once it is, as subscribing would load it)", how, netfilter.NFTablesAbsent(c.Root))
	}
	cfg.Wake, cfg.WakeErr = sub.C, sub.Err
	cfg.PolledStamp = func(ctx context.Context) string { return LegacyStamp(ctx, reader) }
	return fmt.Sprintf("nftables and iptables-nft changes by netlink events, legacy stamps every %s", cfg.Poll)
}

// beatLogger beats for c's host, logging one line when beating starts
// failing and one when it works again.
func beatLogger(c *Command, log func(string)) func(time.Time) {
	failing := false
	return func(now time.Time) {
		err := Beat(c.Root, now)
		switch {
		case err != nil && !failing:
			log(err.Error())
		case err == nil && failing:
			log("heartbeat written again")
		}
		failing = err != nil
	}
}

// Stamps joins every backend's change stamp into one, for loopConfig.Stamp.
// An unreadable stamp becomes its error text: a backend whose kernel
// support appears or vanishes then counts as a change. iptables-nft and
// nftables share the nf_tables generation, read once.
func Stamps(ctx context.Context, s netfilter.Stamper) string {
	return stampsOf(ctx, s, backend.NFTables, backend.IptablesLegacy)
}

// LegacyStamp is the stamp of what nf_tables events do not cover: legacy
// x_tables, which announces nothing. It is loopConfig.PolledStamp when watch
// gets events.
func LegacyStamp(ctx context.Context, s netfilter.Stamper) string {
	return stampsOf(ctx, s, backend.IptablesLegacy)
}

func stampsOf(ctx context.Context, s netfilter.Stamper, backends ...backend.Backend) string {
	var b strings.Builder
	for _, be := range backends {
		st, err := s.Stamp(ctx, be)
		if err != nil {
			st = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "%s=%s\n", be, st)
	}
	return b.String()
}
