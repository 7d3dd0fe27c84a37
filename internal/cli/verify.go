package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
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
	cmd := &cobra.Command{
		Use:   "verify [--wait DURATION] [--expect B]",
		Short: "Prove kube-proxy's rules are complete in the planned backend and nowhere else",
		Long: `verify waits (up to --wait) for kube-proxy's first sync, then checks that the
expected backend (from ` + hostfs.PlanFile + `, or --expect) holds kube-proxy's whole
skeleton for IPv4 and IPv6, that no kube-proxy rules are stranded in another
backend, that kubelet's hint chains sit in the matching backend, and that
kube-proxy's /proxyMode agrees. Each finding names the command that fixes it.
The result goes to ` + hostfs.StatusFile + ` and to Prometheus textfile
metrics (` + verify.MetricsFile + ` in the textfile directory).
Exit 0 when everything holds, 1 when not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVerify(cmd, g, fl)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&fl.wait, "wait", 0, "wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	f.StringVar(&fl.expect, "expect", "", "expected backend, instead of the plan's: "+backend.Names())
	f.StringVar(&fl.kubernetes, "kubernetes", "", "Kubernetes version, e.g. v1.33 (default: the plan's, else any known layout)")
	f.StringVar(&fl.textfileDir, "textfile-dir", "", "node_exporter textfile directory (default: verify.textfile_dir from the config)")
	f.StringVar(&fl.proxyModeURL, "proxy-mode-url", verify.DefaultProxyModeURL, `kube-proxy's /proxyMode URL ("" skips the check)`)
	f.BoolVar(&fl.noStatus, "no-status", false, "write neither "+hostfs.StatusFile+" nor metrics")
	_ = f.MarkHidden("proxy-mode-url")
	return cmd
}

func runVerify(cmd *cobra.Command, g *globals, fl verifyFlags) error {
	root := g.hostRoot()
	cfg, err := config.Load(root, g.configFile, os.Environ(), facts.ReadCmdline(root))
	if err != nil {
		return usageError(err)
	}
	// verify checks kube-proxy's skeleton and where its chains live, never
	// per-service map elements: reading those is quadratic in services.
	reader := netfilter.NewSystem(root)
	reader.Shallow = true
	reader.SkipChain = expected.IsPerServiceChain
	opts := verify.Options{
		Reader:       reader,
		Wait:         cfg.Verify.Wait,
		ProxyModeURL: fl.proxyModeURL,
	}
	if cmd.Flags().Changed("wait") {
		opts.Wait = fl.wait
	}
	if opts.Wait < 0 {
		return usageError(fmt.Errorf("--wait %s: must not be negative", opts.Wait))
	}
	textfileDir := cfg.Verify.TextfileDir
	if cmd.Flags().Changed("textfile-dir") {
		textfileDir = fl.textfileDir
	}
	if err := expectation(root, fl, &opts); err != nil {
		return err
	}
	if opts.Families, opts.SingleStackReason, err = facts.IPFamilies(root); err != nil {
		return failure("verify: %w", err)
	}
	if opts.Expect == "" {
		fmt.Fprintln(g.stdout, "verify: rke2-proxy-backend is turned off (backend: off); nothing to verify")
		return nil
	}
	res, err := verify.Run(cmd.Context(), opts)
	if err != nil {
		return failure("verify: %w", err)
	}
	if !fl.noStatus {
		note, err := verify.WriteMetrics(root, textfileDir, res, time.Now())
		if err != nil {
			return failure("verify: %w", err)
		}
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		if err := verify.WriteStatus(root, res); err != nil {
			return failure("verify: %w", err)
		}
	}
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
	if !res.OK {
		return errSilentFailure
	}
	return nil
}

// expectation fills the expected backend and Kubernetes version from the
// flags, else from the plan apply recorded.
func expectation(root hostfs.Root, fl verifyFlags, opts *verify.Options) error {
	var p plan.Plan
	var planErr error
	if fl.expect == "" || fl.kubernetes == "" {
		p, planErr = plan.Read(root)
	}
	switch {
	case fl.expect != "":
		b, err := backend.Parse(fl.expect)
		if err != nil {
			return usageError(fmt.Errorf("--expect: %w", err))
		}
		opts.Expect, opts.ExpectSource = b, "--expect"
	case planErr != nil && errors.Is(planErr, fs.ErrNotExist):
		return failure("verify: no plan at %s (apply has not run since boot) and no --expect: nothing says which backend to verify", hostfs.PlanFile)
	case planErr != nil:
		return failure("verify: %w", planErr)
	case p.Decision.Disabled:
		return nil
	default:
		if _, err := backend.Parse(string(p.Decision.Backend)); err != nil {
			return failure("verify: plan %s: decision.backend: %w; run `rke2-proxy-backend apply` to rewrite it", hostfs.PlanFile, err)
		}
		opts.Expect, opts.ExpectSource = p.Decision.Backend, hostfs.PlanFile
	}
	kube := fl.kubernetes
	if kube == "" && planErr == nil {
		kube = p.Kubernetes
	}
	if kube != "" {
		v, err := rke2.ParseVersion(kube)
		if err != nil {
			if fl.kubernetes != "" {
				return usageError(fmt.Errorf("--kubernetes: %w", err))
			}
			return failure("verify: plan %s: kubernetes: %w", hostfs.PlanFile, err)
		}
		opts.Kubernetes = v
	}
	return nil
}
