package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/adopt"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/switchover"
)

func newAdoptCommand(g *globals) *cobra.Command {
	var o adopt.Options
	var sctl string
	cmd := flagsOnly(spec{"adopt [--dry-run] [--wait DURATION]", "Record what a running node's kube-proxy runs on as the plan and start verifying, without restarting RKE2", "adopt", printsJSON}, func(cmd *cobra.Command) error {
		o.Systemd, o.Log = adopt.Systemctl{Path: sctl}, g.logf("adopt")
		o.Lock = func(ctx context.Context) (func(), error) {
			return switchover.HoldNode(ctx, g.hostRoot(), g.host().Distribution, "adopt", o.Log)
		}
		res, err := adopt.OnHost(cmd.Context(), g.host(), o)
		var bad *adopt.HostError
		if errors.As(err, &bad) {
			return usageError(err)
		}
		if perr := adopt.Print(g.stdout, res, o.DryRun, g.json()); err == nil {
			err = perr
		}
		switch {
		case err != nil:
			return failure("adopt: %w", err)
		case res.Outcome == adopt.CannotTell:
			return silentExit(ExitCannotTell)
		case res.Outcome == adopt.Refused:
			return silentExit(ExitFailure)
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVar(&o.DryRun, "dry-run", false, "read and print what would be recorded; write and start nothing")
	fl.DurationVar(&o.Wait, "wait", 0, "wait up to this long for kube-proxy's first rules when there are none yet")
	fl.StringVar(&o.ProxyModeURL, "proxy-mode-url", kubeproxy.DefaultProxyModeURL, `kube-proxy's /proxyMode URL ("" skips asking)`)
	_ = fl.MarkHidden("proxy-mode-url")
	fl.StringVar(&sctl, "systemctl", "", "systemctl's path (tests)")
	_ = fl.MarkHidden("systemctl")
	return cmd
}
