// Package prove proves this host, once (the verify command, Once) or as a
// watch (the watch service, Watch): verify.ForHost and verify.Run, the
// checks only a probe of the host's own files can make (refused
// kube-proxy args, nft version skew, ipvs leftovers), then what the run
// proved stored through internal/proof. The watch re-verifies after a
// rule change has settled: nf_tables announces its changes as netlink
// events, legacy x_tables' change stamp is polled (a few syscalls), and
// drift is reported only when kube-proxy's rules stay wrong for longer
// than its own resync would take to put them back.
package prove

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// Flags are the verify and watch commands' shared flags as given; a *Set
// field says the flag was on the command line (else the config's value,
// or the endpoint RKE2's config gives kube-proxy, counts).
type Flags struct {
	Claim           verify.Claim
	Wait            time.Duration
	WaitSet         bool
	TextfileDir     string
	TextfileDirSet  bool
	ProxyModeURL    string
	ProxyModeURLSet bool
	NoStatus        bool
	// Distribution is the global --distribution ("" finds it), which
	// Given takes from the command's flag set.
	Distribution distro.Kind
}

// Command is verify as the verify and watch commands run it on a host:
// Host says what to look at, Wait how long the first run waits for
// kube-proxy's first sync, TextfileDir where the metrics go, NoStatus
// that no result is stored. Progress gets the lines worth the journal.
type Command struct {
	verify.Host
	// ConfigFile is the operator config the run was loaded from (for the
	// checks that read it again, such as the refused kube-proxy args).
	ConfigFile  string
	Wait        time.Duration
	TextfileDir string
	NoStatus    bool
	Progress    func(string)
	// NodeFeatures publishes the result as node-feature-discovery labels
	// (verify.node_feature_file), valid for FeatureTTL (0:
	// proof.DefaultFeatureTTL).
	NodeFeatures bool
	FeatureTTL   time.Duration
	// NodeCondition: the result also goes to the node's own Node object
	// (verify.node_condition).
	NodeCondition bool
	// CensusInterval is how often watch takes the legacy-xtables census
	// (census.interval; 0: never).
	CensusInterval time.Duration
	// run is the run in progress (Verify to its store).
	run *proof.StoreRun
}

// Load resolves f against the operator config under root (configFile, the
// environment and the kernel command line, as apply reads them). Every
// error is a usage error: a config that does not load, or a flag out of
// range.
func Load(root hostfs.Root, configFile string, f Flags) (*Command, error) {
	cfg, err := config.Load(root, configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return nil, err
	}
	c := &Command{Host: verify.Host{Root: root, Claim: f.Claim, Distribution: f.Distribution}, ConfigFile: configFile, Wait: time.Duration(cfg.Verify.Wait), TextfileDir: cfg.Verify.TextfileDir, NoStatus: f.NoStatus,
		NodeFeatures: cfg.Verify.NodeFeatureFile, NodeCondition: cfg.Verify.NodeCondition, CensusInterval: time.Duration(cfg.Census.Interval)}
	if f.WaitSet {
		c.Wait = f.Wait
	}
	if f.TextfileDirSet {
		c.TextfileDir = f.TextfileDir
	}
	if c.Wait < 0 {
		return nil, fmt.Errorf("--wait %s: must not be negative", c.Wait)
	}
	if f.ProxyModeURLSet {
		ep := kubeproxy.Endpoint{URL: f.ProxyModeURL}
		if ep.URL != "" {
			if err := kubeproxy.CheckProxyModeURL(ep.URL); err != nil {
				return nil, fmt.Errorf("--proxy-mode-url: %w", err)
			}
			ep.Source = "--proxy-mode-url"
		}
		c.ProxyMode = &ep
	}
	return c, nil
}

// Verify is one run: verify.ForHost, then verify.Run waiting up to wait,
// its progress lines (and the host files the CNI could not be read from,
// as warnings) to progress (nil: none), then the add-ons. The result is a
// "cannot tell" one when nothing says which backend to expect;
// verify.ErrOff when the plan turned the tool off; a *verify.FlagError
// for a claim that does not parse.
func (c *Command) Verify(ctx context.Context, wait time.Duration, progress func(string)) (*verify.Result, error) {
	c.begin()
	h := c.Host
	if progress != nil {
		h.Warn = func(u string) { progress("warning: " + u) }
	}
	opts, unknown, err := verify.ForHost(h)
	switch {
	case err != nil || unknown != nil:
		return unknown, err
	case opts.Expect == "":
		return nil, verify.ErrOff
	}
	opts.Wait, opts.Progress = wait, progress
	res, err := verify.Run(ctx, opts)
	if err == nil {
		c.addOns(ctx, opts, res)
	}
	return res, err
}

// invalidate stores that a run ended without a result (a broken plan, no
// /proc, SIGTERM during the wait): no earlier result stands for the host
// then. A bad claim or a tool turned off is no run, and invalidates
// nothing. It returns what the node says then (nil: nothing was stored)
// and err, joined with the store's own error.
func (c *Command) invalidate(err error) (*proof.State, error) {
	var bad *verify.FlagError
	if c.NoStatus || errors.As(err, &bad) || errors.Is(err, verify.ErrOff) {
		return nil, errors.Join(err, c.run.End(nil))
	}
	st := proof.Of(c.Root, nil, "verify could not run: "+err.Error(), time.Now())
	return &st, errors.Join(err, c.store(&st))
}

// store stores what st says (proof.State.Store) and ends the run's mark.
func (c *Command) store(st *proof.State) error {
	if c.NoStatus {
		return nil
	}
	return st.Store(proof.Outputs{TextfileDir: c.TextfileDir, Run: c.run, Features: c.NodeFeatures, FeatureTTL: c.FeatureTTL, Distribution: c.Distribution})
}

// begin marks the run that store ends (see Verify).
func (c *Command) begin() {
	if c.NoStatus {
		return
	}
	c.run.End(proof.ErrStatusStands) // a run never ended: its mark stays
	var err error
	files := []string{hostfs.NFDFeatureFile}
	if c.TextfileDir != "" {
		files = append(files, path.Join(c.TextfileDir, proof.MetricsFile))
	}
	if c.run, err = proof.BeginRun(c.Root, files...); err != nil && c.Progress != nil {
		c.Progress("warning: " + err.Error() + "; a run killed before it stores its result cannot be told from a finished one")
	}
}

// Once is the verify command's run: Verify, with Wait and Progress, and
// the result stored. Every run that has a result stores it, "cannot tell"
// included, and one without invalidates the last: status.json is never
// older than the last run. A result comes with the store's error, if any.
// With verify.node_condition on and no watch running (no heartbeat in the
// last two beats; a running watch publishes itself), the run's state also
// goes to the Node (writeNode).
func (c *Command) Once(ctx context.Context) (*verify.Result, error) {
	res, err := c.Verify(ctx, c.Wait, c.Progress)
	if err != nil {
		_, err = c.invalidate(err)
		return nil, err
	}
	st := proof.Of(c.Root, res, "", time.Now())
	if err := c.store(&st); err != nil || !c.NodeCondition || c.NoStatus || watchRuns(c.Root) {
		return res, err
	}
	c.writeNode(ctx, st)
	return res, nil
}
