package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
)

func newCheckCommand(g *globals) *cobra.Command {
	var maxAge time.Duration
	// check speaks node-problem-detector's one-line protocol.
	noJSON := "read " + hostfs.StatusFile + ", which is verify's result as JSON"
	cmd := flagsOnly(spec{"check", "Judge verify's last result in node-problem-detector's plugin protocol", "check", noJSON}, func(cmd *cobra.Command) error {
		if maxAge < 0 {
			return usageError(fmt.Errorf("--max-age %s: must not be negative (0 turns the age limit off)", maxAge))
		}
		v := proof.Check(g.hostRoot(), proof.CheckOptions{MaxAge: maxAge})
		if _, err := fmt.Fprintln(g.stdout, v.Message); err != nil {
			return &exitError{code: int(proof.Unknown), err: fmt.Errorf("check: write output: %w", err)}
		}
		if v.Status == proof.OK {
			return nil
		}
		return silentExit(int(v.Status))
	})
	cmd.Flags().DurationVar(&maxAge, "max-age", proof.DefaultMaxAge, "how old the watch service's heartbeat may be before the status is stale (0: no limit)")
	return cmd
}
