package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nfdfeatures"
)

// Load resolves f against the operator config under root (configFile, the
// environment and the kernel command line, as apply reads them). Every
// error is a usage error: a config that does not load, or a flag out of
// range.
func Load(root hostfs.Root, configFile string, f Flags) (*Command, error) {
	cfg, err := config.Load(root, configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return nil, err
	}
	c := &Command{Host: Host{Root: root, Claim: f.Claim, Distribution: f.Distribution}, ConfigFile: configFile, Wait: cfg.Verify.Wait, TextfileDir: cfg.Verify.TextfileDir, NoStatus: f.NoStatus,
		NodeFeatures: cfg.Verify.NodeFeatureFile, NodeCondition: cfg.Verify.NodeCondition}
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

// Verify is one run: ForHost, then Run waiting up to wait, its progress
// lines (and the host files the CNI could not be read from, as warnings)
// to progress (nil: none). The result is a "cannot tell" one when nothing
// says which backend to expect; ErrOff when the plan turned the tool off;
// a *FlagError for a claim that does not parse.
func (c *Command) Verify(ctx context.Context, wait time.Duration, progress func(string)) (*Result, error) {
	h := c.Host
	if progress != nil {
		h.Warn = func(u string) { progress("warning: " + u) }
	}
	opts, unknown, err := ForHost(h)
	switch {
	case err != nil || unknown != nil:
		return unknown, err
	case opts.Expect == "":
		return nil, ErrOff
	}
	opts.Wait, opts.Progress = wait, progress
	res, err := Run(ctx, opts)
	if err == nil {
		// The image's nft against the host's: a finding only on nftables.
		AddNftSkew(ctx, c.Root, res)
		// ipvs's state left by an earlier ipvs mode (sets, kube-ipvs0,
		// virtual servers): a finding only on a node out of ipvs mode.
		AddIPVSLeftovers(opts, res)
		// A kube-proxy that cannot start: the item of RKE2's config to remove.
		AddRefusedKubeProxyArgs(c.Root, c.ConfigFile, res)
		newGroup(opts).reword(res)
	}
	return res, err
}

// Invalidate stores that a run ended without a result (a broken plan, no
// /proc, SIGTERM during the wait): no earlier result stands for the host
// then. A bad claim or a tool turned off is no run, and invalidates
// nothing. It returns err, joined with the store's own error.
func (c *Command) Invalidate(err error) error {
	var bad *FlagError
	if c.NoStatus || errors.As(err, &bad) || errors.Is(err, ErrOff) {
		return err
	}
	return errors.Join(err, Invalidate(c.Root, "verify could not run: "+err.Error()), nfdfeatures.Remove(c.Root))
}

// Publish stores res as status.json, the textfile metrics and the
// node-feature-discovery labels.
func (c *Command) Publish(res *Result, now time.Time) error {
	if c.NoStatus {
		return nil
	}
	return errors.Join(Publish(c.Root, c.TextfileDir, res, now), c.publishFeatures(res, now))
}

// Once is the verify command's run: Verify, with Wait and Progress, and
// the result stored. Every run that has a result stores it, "cannot tell"
// included, and one without invalidates the last: status.json is never
// older than the last run. A result comes with the store's error, if any.
func (c *Command) Once(ctx context.Context) (*Result, error) {
	res, err := c.Verify(ctx, c.Wait, c.Progress)
	if err != nil {
		return nil, c.Invalidate(err)
	}
	return res, c.Publish(res, time.Now())
}
