package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func init() { register(newVerifyCommand) }

type verifyFlags struct {
	wait         time.Duration
	expect       string
	kubernetes   string
	textfileDir  string
	proxyModeURL string
	noStatus     bool
}

func newVerifyCommand(g *globals) *cobra.Command {
	var fl verifyFlags
	cmd := flagsOnly("verify [--wait DURATION] [--expect B]", "Prove kube-proxy's rules are complete in the planned backend and nowhere else", helpText("verify"), func(cmd *cobra.Command) error {
		return runVerify(cmd, g, fl)
	})
	f := cmd.Flags()
	addVerifyFlags(f, &fl, "wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	return cmd
}

// addVerifyFlags registers the flags verify and watch share; wait says
// what --wait means for the command.
func addVerifyFlags(f *pflag.FlagSet, fl *verifyFlags, wait string) {
	f.DurationVar(&fl.wait, "wait", 0, wait)
	f.StringVar(&fl.expect, "expect", "", "expected backend, instead of the plan's: "+backend.Names())
	f.StringVar(&fl.kubernetes, "kubernetes", "", "Kubernetes version, e.g. v1.33 (default: the plan's, else any known layout)")
	f.StringVar(&fl.textfileDir, "textfile-dir", "", "node_exporter textfile directory (default: verify.textfile_dir from the config)")
	f.StringVar(&fl.proxyModeURL, "proxy-mode-url", "", `kube-proxy's /proxyMode URL (default: where RKE2's kube-proxy-arg metrics-bind-address puts it, else `+kubeproxy.DefaultProxyModeURL+`; "" skips the check)`)
	f.BoolVar(&fl.noStatus, "no-status", false, "write neither "+hostfs.StatusFile+" nor metrics")
	_ = f.MarkHidden("proxy-mode-url")
}

// ExitCannotTell is verify's exit status when it cannot tell whether
// kube-proxy is right (verify.VerdictUnknown): a monitor must not read it
// as a pass, nor page as for a broken node.
const ExitCannotTell = 3

func runVerify(cmd *cobra.Command, g *globals, fl verifyFlags) error {
	root := g.hostRoot()
	cfg, err := config.Load(root, g.configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return usageError(err)
	}
	// verify checks kube-proxy's skeleton and where its chains live, never
	// per-service map elements: reading those is quadratic in services.
	reader := verify.NewReader(root)
	opts := verify.Options{
		Reader: reader,
		Wait:   cfg.Verify.Wait,
	}
	proxyModeEndpoint(cmd, root, fl, &opts)
	if cmd.Flags().Changed("wait") {
		opts.Wait = fl.wait
	}
	if opts.Wait < 0 {
		return usageError(fmt.Errorf("--wait %s: must not be negative", opts.Wait))
	}
	if fl.proxyModeURL != "" {
		if err := kubeproxy.CheckProxyModeURL(fl.proxyModeURL); err != nil {
			return usageError(fmt.Errorf("--proxy-mode-url: %w", err))
		}
	}
	opts.Progress = func(line string) { fmt.Fprintln(g.stderr, "rke2-proxy-backend: verify: "+line) }
	readCNI(root, &opts, opts.Progress)
	textfileDir := cfg.Verify.TextfileDir
	if cmd.Flags().Changed("textfile-dir") {
		textfileDir = fl.textfileDir
	}
	unknown, err := expectation(root, fl, &opts)
	if err != nil {
		if exitCode(err) != ExitUsage && !fl.noStatus {
			// The host could not be judged (a broken plan, no /proc):
			// no earlier result stands for it either.
			if ierr := verify.Invalidate(root, "verify could not run: "+strings.TrimPrefix(err.Error(), "verify: ")); ierr != nil {
				return failure("verify: %w", errors.Join(err, ierr))
			}
		}
		return err
	}
	if unknown == nil && opts.Expect == "" {
		fmt.Fprintln(g.stdout, "verify: rke2-proxy-backend is turned off (backend: off); nothing to verify")
		return nil
	}
	res := unknown
	if res == nil {
		res, err = verify.Run(cmd.Context(), opts)
	}
	if err != nil {
		// A run that ends without a result (SIGTERM during the wait)
		// leaves no earlier result standing either.
		if !fl.noStatus {
			err = errors.Join(err, verify.Invalidate(root, "verify could not run: "+err.Error()))
		}
		return failure("verify: %w", err)
	}
	// Every run that has a result stores it, "cannot tell" included:
	// status.json is never older than the last run.
	var pubErr error
	if !fl.noStatus {
		pubErr = verify.Publish(root, textfileDir, res, time.Now())
	}
	rerr := reportVerify(g, res)
	if pubErr != nil {
		return failure("verify: %w", pubErr)
	}
	return rerr
}

// proxyModeEndpoint sets where verify asks kube-proxy for its mode: the
// hidden --proxy-mode-url when given, else where RKE2's config makes
// kube-proxy listen (read at every run: the operator may change it).
func proxyModeEndpoint(cmd *cobra.Command, root hostfs.Root, fl verifyFlags, opts *verify.Options) {
	if cmd.Flags().Changed("proxy-mode-url") {
		opts.ProxyModeURL = fl.proxyModeURL
		if fl.proxyModeURL != "" {
			opts.ProxyModeSource = "--proxy-mode-url"
		}
		return
	}
	ep := kubeproxy.ProxyModeEndpoint(root)
	opts.ProxyModeURL, opts.ProxyModeSource = ep.URL, ep.Source
}

// reportVerify prints res and maps its verdict to the exit status.
func reportVerify(g *globals, res *verify.Result) error {
	if g.json() {
		b, err := verify.JSON(res)
		if err != nil {
			return failure("verify: %w", err)
		}
		if _, err := g.stdout.Write(b); err != nil {
			return failure("verify: write output: %w", err)
		}
	} else if err := verify.WriteText(g.stdout, res); err != nil {
		return failure("verify: write output: %w", err)
	}
	switch res.Verdict {
	case verify.VerdictOK:
		return nil
	case verify.VerdictUnknown:
		return &exitError{code: ExitCannotTell, err: errors.New("")}
	}
	return errSilentFailure
}

// expectation fills opts from the flags, else from the plan (verify.Expect),
// and maps its errors to exit codes: a bad flag is a usage error.
func expectation(root hostfs.Root, fl verifyFlags, opts *verify.Options) (*verify.Result, error) {
	unknown, err := verify.Expect(root, verify.Claim{Backend: fl.expect, Kubernetes: fl.kubernetes}, opts)
	var bad *verify.FlagError
	switch {
	case errors.As(err, &bad):
		return nil, usageError(err)
	case err != nil:
		return nil, failure("verify: %w", err)
	}
	return unknown, nil
}

// readCNI tells verify which CNI RKE2 runs, so a CNI finding names the one
// chart value to set, and how to list the CNIs' own nftables tables. The
// files it could not read are warnings (warn may be nil): a CNI it cannot
// name only makes the finding's fix less precise.
func readCNI(root hostfs.Root, opts *verify.Options, warn func(string)) {
	setup, unreadable := facts.ReadCNI(root)
	opts.CNI = &setup
	opts.NFTTables = netfilter.NFTTables
	if warn == nil {
		return
	}
	for _, u := range unreadable {
		warn("warning: " + u)
	}
}
