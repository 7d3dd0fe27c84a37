package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/watch"
)

func init() { register(newWatchCommand) }

type watchFlags struct {
	verifyFlags
	poll, quiet, grace, full time.Duration
}

func newWatchCommand(g *globals) *cobra.Command {
	var fl watchFlags
	cmd := flagsOnly("watch [--grace DURATION] [--expect B]", "Keep verifying kube-proxy's backend and report drift (the watch service)", helpText("watch"), func(cmd *cobra.Command) error {
		return runWatch(cmd, g, fl)
	})
	f := cmd.Flags()
	addVerifyFlags(f, &fl.verifyFlags, "first run only: wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	f.DurationVar(&fl.poll, "poll", watch.DefaultPoll, "how often to read legacy's change stamp (every backend's without nftables events)")
	f.DurationVar(&fl.quiet, "quiet", watch.DefaultQuiet, "how long the rules must stay still after a change before verify runs")
	f.DurationVar(&fl.grace, "grace", watch.DefaultGrace, "how long rules may stay wrong before it is drift")
	f.DurationVar(&fl.full, "full", watch.DefaultFull, "run verify at least this often even if no stamp moved")
	return cmd
}

func runWatch(cmd *cobra.Command, g *globals, fl watchFlags) error {
	root := g.hostRoot()
	cfg, err := config.Load(root, g.configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return usageError(err)
	}
	// --wait 0 checks at once and --grace 0 calls any failure drift; the
	// schedule's periods must be positive or watch would spin.
	for name, d := range map[string]time.Duration{"--wait": fl.wait, "--grace": fl.grace} {
		if d < 0 {
			return usageError(fmt.Errorf("%s %s: must not be negative", name, d))
		}
	}
	for name, d := range map[string]time.Duration{"--poll": fl.poll, "--quiet": fl.quiet, "--full": fl.full} {
		if d <= 0 {
			return usageError(fmt.Errorf("%s %s: must be positive", name, d))
		}
	}
	if fl.proxyModeURL != "" {
		if err := kubeproxy.CheckProxyModeURL(fl.proxyModeURL); err != nil {
			return usageError(fmt.Errorf("--proxy-mode-url: %w", err))
		}
	}
	firstWait := cfg.Verify.Wait
	if cmd.Flags().Changed("wait") {
		firstWait = fl.wait
	}
	textfileDir := cfg.Verify.TextfileDir
	if cmd.Flags().Changed("textfile-dir") {
		textfileDir = fl.textfileDir
	}
	logf := func(line string) { fmt.Fprintln(g.stderr, "rke2-proxy-backend: watch: "+line) }
	// Only the stamps run while idle; the reader is verify's (shallow,
	// skipping per-Service chains) so a re-verify costs what verify costs.
	reader := verify.NewReader(root)

	// Resolve the expectation now so "backend: off" ends watch at once.
	var probe verify.Options
	if unknown, err := expectation(root, fl.verifyFlags, &probe); err != nil {
		return err
	} else if unknown == nil && probe.Expect == "" {
		fmt.Fprintln(g.stdout, "watch: rke2-proxy-backend is turned off (backend: off); nothing to watch")
		return nil
	}

	beatFailing := false
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	wcfg := watch.Config{Stamp: func(ctx context.Context) string { return watch.Stamps(ctx, reader) }}
	how := fmt.Sprintf("every backend's stamp every %s", fl.poll)
	if !root.IsHost() {
		// Under --root the netlink socket would see this machine's
		// rules, not the fixture's: poll, as verify --root does.
		how += " (--root: no netlink events)"
	} else if sub, err := events.Subscribe(ctx, events.Options{Quiet: fl.quiet, MaxDelay: watch.DefaultMaxDelay}); err != nil {
		how = fmt.Sprintf("cannot subscribe to nftables change events (%v), so polling every backend's stamp every %s instead", err, fl.poll)
	} else {
		wcfg.Wake, wcfg.WakeErr = sub.C, sub.Err
		wcfg.PolledStamp = func(ctx context.Context) string { return watch.LegacyStamp(ctx, reader) }
		how = fmt.Sprintf("nftables and iptables-nft changes by netlink events, legacy stamps every %s", fl.poll)
	}
	logf(fmt.Sprintf("started: %s; verify after %s of quiet or every %s, drift after %s", how, fl.quiet, fl.full, fl.grace))
	runVerify := func(ctx context.Context, first bool) (*verify.Result, error) {
		// The plan is read at every run: apply rewrites it when RKE2
		// restarts with another backend.
		opts := verify.Options{Reader: reader}
		proxyModeEndpoint(cmd, root, fl.verifyFlags, &opts)
		if first {
			opts.Wait = firstWait
			opts.Progress = func(line string) { logf(line) }
		}
		// Read at every run too: the operator may move the CNI between
		// runs (a HelmChartConfig change); warnings only at the first.
		readCNI(root, &opts, opts.Progress)
		unknown, err := expectation(root, fl.verifyFlags, &opts)
		if err != nil {
			return nil, err
		}
		if unknown != nil {
			return unknown, nil
		}
		if opts.Expect == "" {
			return verify.CannotTell("backend: off in the config since watch started", "restart rke2-proxy-backend-watch.service"), nil
		}
		return verify.Run(ctx, opts)
	}
	wcfg.Verify = func(ctx context.Context, first bool) (*verify.Result, error) {
		res, err := runVerify(ctx, first)
		if err != nil && ctx.Err() == nil && !fl.noStatus {
			// No result this time: the last one no longer stands.
			err = errors.Join(err, verify.Invalidate(root, "verify could not run: "+strings.TrimPrefix(err.Error(), "verify: ")))
		}
		return res, err
	}
	wcfg.Publish = func(res *verify.Result, drifting bool, transitions int) error {
		if fl.noStatus {
			return nil
		}
		return errors.Join(verify.Publish(root, textfileDir, res, time.Now()),
			watch.WriteMetrics(root, textfileDir, drifting, transitions))
	}
	wcfg.Heartbeat = func(now time.Time) {
		if fl.noStatus {
			return
		}
		// One line when beating starts failing, one when it works again.
		err := watch.Beat(root, now)
		switch {
		case err != nil && !beatFailing:
			logf(err.Error())
		case err == nil && beatFailing:
			logf("heartbeat written again")
		}
		beatFailing = err != nil
	}
	wcfg.Log = logf
	wcfg.Poll = fl.poll
	wcfg.Quiet = fl.quiet
	wcfg.Grace = fl.grace
	wcfg.Full = fl.full
	// A stamp that never settles is still checked after a minute.
	wcfg.MaxDelay = watch.DefaultMaxDelay
	err = watch.Run(ctx, wcfg)
	if err != nil {
		return failure("watch: %w", err)
	}
	logf("stopped")
	return nil
}
