package cli

import (
	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/watch"
)

func newWatchCommand(g *globals) *cobra.Command {
	var fl verify.Flags
	var s watch.Schedule
	// watch is a service: it logs drift to the journal, status.json is its record.
	cmd := flagsOnly(spec{"watch [--grace DURATION] [--expect B]", "Keep verifying kube-proxy's backend and report drift (the watch service)", "watch", textOnly}, func(cmd *cobra.Command) error {
		c, err := loadVerify(cmd, g, fl)
		if err != nil {
			return err
		}
		if err := s.Check(); err != nil {
			return usageError(err)
		}
		return verifyExit(cmd, g, nil, watch.OnHost(cmd.Context(), c, s))
	})
	f := cmd.Flags()
	fl.Register(f, "first run only: wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	f.DurationVar(&s.Poll, "poll", watch.DefaultPoll, "how often to read legacy's change stamp (every backend's without nftables events)")
	f.DurationVar(&s.Quiet, "quiet", watch.DefaultQuiet, "how long the rules must stay still after a change before verify runs")
	f.DurationVar(&s.Grace, "grace", watch.DefaultGrace, "how long rules may stay wrong before it is drift")
	f.DurationVar(&s.Full, "full", watch.DefaultFull, "run verify at least this often even if no stamp moved")
	return cmd
}
