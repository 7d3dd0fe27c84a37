package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nodecheck"
)

func init() { register(newCheckCommand) }

const checkLong = `check reads verify's last result (` + hostfs.StatusFile + `) and prints one
short line, exiting as node-problem-detector's custom plugins do:
0 when kube-proxy's rules were complete in the planned backend and nowhere
else, 1 when verify found a problem (the first finding's kind and a count),
2 when it cannot tell (no plan or status yet, a status for another backend
than the plan's, an unreadable status, one without a schema or with a
schema it does not know, or the invalid record a verify run leaves when it
could not store its result). It reads no netfilter state, so it is cheap
enough to run every few seconds.

While the watch service runs it touches ` + hostfs.WatchHeartbeat + ` every
30s; a heartbeat older than --max-age (a watch that died or was stopped),
dated more than 5s in the future (the clock stepped back since its last
beat) or not a regular file makes the status stale: exit 2 with the unit
to look at. status.json's own
mtime is never judged: it is rewritten only when the result changes. With
no heartbeat (watch not running this boot) the status is judged as it is.`

func newCheckCommand(g *globals) *cobra.Command {
	var maxAge time.Duration
	cmd := flagsOnly("check", "Judge verify's last result in node-problem-detector's plugin protocol", checkLong, func(cmd *cobra.Command) error {
		if maxAge < 0 {
			return usageError(fmt.Errorf("--max-age %s: must not be negative (0 turns the age limit off)", maxAge))
		}
		v := nodecheck.Check(g.hostRoot(), nodecheck.Options{MaxAge: maxAge})
		if _, err := fmt.Fprintln(g.stdout, v.Message); err != nil {
			return &exitError{code: int(nodecheck.Unknown), err: fmt.Errorf("check: write output: %w", err)}
		}
		if v.Status == nodecheck.OK {
			return nil
		}
		return &exitError{code: int(v.Status), err: errors.New("")}
	})
	cmd.Flags().DurationVar(&maxAge, "max-age", nodecheck.DefaultMaxAge, "how old the watch service's heartbeat may be before the status is stale (0: no limit)")
	return cmd
}
