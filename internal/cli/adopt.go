package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/adopt"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

func init() { register(newAdoptCommand) }

// ExitAdoptCannotTell is verify's "cannot tell" code, for the same reason.
const ExitAdoptCannotTell = ExitCannotTell

func newAdoptCommand(g *globals) *cobra.Command {
	var (
		dryRun             bool
		wait               time.Duration
		proxyModeURL, sctl string
	)
	cmd := flagsOnly("adopt [--dry-run] [--wait DURATION]", "Record what a running node's kube-proxy runs on as the plan and start verifying, without restarting RKE2", helpText("adopt"), func(cmd *cobra.Command) error {
		f, cfg, _, err := g.loadDecision(facts.Options{RKE2Binary: true})
		if err != nil {
			return usageError(fmt.Errorf("%w; nothing adopted: fix it first, the generator's choice depends on it", err))
		}
		logf := func(format string, args ...any) {
			fmt.Fprintf(g.stderr, "rke2-proxy-backend adopt: "+format+"\n", args...)
		}
		res, err := adopt.Run(cmd.Context(), adopt.Options{
			Root: g.hostRoot(), Facts: f, Config: cfg, Reader: verify.NewReader(g.hostRoot()),
			ProxyModeURL: proxyModeURL, Systemd: adopt.Systemctl{Path: sctl}, Wait: wait, DryRun: dryRun, Log: logf,
		})
		if perr := printAdopt(g, res, dryRun); perr != nil && err == nil {
			err = perr
		}
		var ee *exitError
		switch {
		case errors.As(err, &ee):
			return err
		case err != nil:
			return failure("adopt: %w", err)
		case res.Outcome == adopt.CannotTell:
			return &exitError{code: ExitAdoptCannotTell, err: errors.New("")}
		case res.Outcome == adopt.Refused:
			return errSilentFailure
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "read and print what would be recorded; write and start nothing")
	fl.DurationVar(&wait, "wait", 0, "wait up to this long for kube-proxy's first rules when there are none yet")
	fl.StringVar(&proxyModeURL, "proxy-mode-url", kubeproxy.DefaultProxyModeURL, `kube-proxy's /proxyMode URL ("" skips asking)`)
	_ = fl.MarkHidden("proxy-mode-url")
	fl.StringVar(&sctl, "systemctl", "", "systemctl's path (tests)")
	_ = fl.MarkHidden("systemctl")
	return cmd
}

func printAdopt(g *globals, res adopt.Result, dryRun bool) error {
	if g.json() {
		out := struct {
			adopt.Result
			DryRun bool `json:"dry_run"`
		}{res, dryRun}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return failure("adopt: encode output: %w", err)
		}
		_, err = fmt.Fprintf(g.stdout, "%s\n", data)
		return err
	}
	w := g.stdout
	if res.Outcome != adopt.Adopted {
		if res.Outcome == "" {
			return nil // failed before judging; the error says why
		}
		_, err := fmt.Fprintf(w, "adopt: %s: %s\n", res.Outcome, res.Message)
		return err
	}
	p := res.Plan
	verb := "recorded"
	if dryRun {
		verb = "would record"
	}
	fmt.Fprintf(w, "adopt: kube-proxy runs on %s (under %s); %s it as this boot's plan in %s (source %s), without restarting RKE2\n",
		p.Decision.Backend, res.Unit, verb, hostfs.PlanFile, p.Decision.Source)
	for _, r := range p.Decision.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	if res.NextStart != nil && len(res.Differences) == 0 {
		fmt.Fprintf(w, "adopt: RKE2's next start and the next boot keep %s (source %s)\n", res.NextStart.Backend, res.NextStart.Source)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "adopt: warning: %s\n", warn)
	}
	if dryRun {
		_, err := fmt.Fprintf(w, "adopt: dry run: nothing written, systemd not touched (a real run: daemon-reload, start %s and %s)\n", units.VerifyUnit, units.WatchUnit)
		return err
	}
	_, err := fmt.Fprintf(w, "adopt: done: %s\n", strings.Join(res.Actions, "; "))
	return err
}
