package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/prove"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func newVerifyCommand(g *globals) *cobra.Command {
	var fl prove.Flags
	cmd := flagsOnly(spec{"verify [--wait DURATION] [--expect B]", "Prove kube-proxy's rules are complete in the planned backend and nowhere else", "verify", printsJSON}, func(cmd *cobra.Command) error {
		c, err := loadVerify(cmd, g, fl)
		if err != nil {
			return err
		}
		res, err := c.Once(cmd.Context())
		return verifyExit(cmd, g, res, err)
	})
	fl.Register(cmd.Flags(), "wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	return cmd
}

func newWatchCommand(g *globals) *cobra.Command {
	var fl prove.Flags
	var s prove.Schedule
	// watch is a service: it logs drift to the journal, status.json is its record.
	cmd := flagsOnly(spec{"watch [--grace DURATION] [--expect B]", "Keep verifying kube-proxy's backend and report drift (the watch service)", "watch", textOnly}, func(cmd *cobra.Command) error {
		c, err := loadVerify(cmd, g, fl)
		if err != nil {
			return err
		}
		if err := s.Check(); err != nil {
			return usageError(err)
		}
		return verifyExit(cmd, g, nil, c.Watch(cmd.Context(), s))
	})
	f := cmd.Flags()
	fl.Register(f, "first run only: wait up to this long for kube-proxy's first sync (default: verify.wait from the config)")
	f.DurationVar(&s.Poll, "poll", prove.DefaultPoll, "how often to read legacy's change stamp (every backend's without nftables events)")
	f.DurationVar(&s.Quiet, "quiet", prove.DefaultQuiet, "how long the rules must stay still after a change before verify runs")
	f.DurationVar(&s.Grace, "grace", prove.DefaultGrace, "how long rules may stay wrong before it is drift")
	f.DurationVar(&s.Full, "full", prove.DefaultFull, "run verify at least this often even if no stamp moved")
	return cmd
}

// loadVerify resolves verify's and watch's flags against the config; the
// progress lines go to stderr under the command's name.
func loadVerify(cmd *cobra.Command, g *globals, fl prove.Flags) (*prove.Command, error) {
	c, err := prove.Load(g.hostRoot(), g.configFile, fl.Given(cmd.Flags(), g.distro))
	if err != nil {
		return nil, usageError(err)
	}
	c.Progress = func(line string) { fmt.Fprintln(g.stderr, "rke2-proxy-backend: "+cmd.Name()+": "+line) }
	return c, nil
}

// verifyExit prints a run's result and maps the run to the exit status:
// the verdict's, 2 for a claim that does not parse, 1 for a run without
// a result or whose result could not be stored or printed.
func verifyExit(cmd *cobra.Command, g *globals, res *verify.Result, err error) error {
	var bad *verify.FlagError
	switch {
	case errors.As(err, &bad):
		return usageError(err)
	case errors.Is(err, verify.ErrOff):
		fmt.Fprintf(g.stdout, "%s: %v; nothing to %[1]s\n", cmd.Name(), err)
		return nil
	case res != nil:
		if werr := proof.Write(g.stdout, res, g.json()); err == nil {
			err = werr
		}
	}
	switch {
	case err != nil:
		return failure("verify: %w", err)
	case res == nil || res.Verdict == verify.VerdictOK:
		return nil
	case res.Verdict == verify.VerdictUnknown:
		return silentExit(ExitCannotTell)
	}
	return silentExit(ExitFailure)
}
