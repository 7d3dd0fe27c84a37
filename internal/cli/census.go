package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
)

func newCensusCommand(g *globals) *cobra.Command {
	var maxNS int
	cmd := flagsOnly(spec{"census", "Tell whether this node can move to a kernel without legacy xtables, and which namespaces hold it back", "census", printsJSON}, func(cmd *cobra.Command) error {
		if !g.hostRoot().IsHost() {
			return usageError(fmt.Errorf("--root %s: census reads the running kernel's network namespaces through /proc, not a root's files: run it on the node itself", g.root))
		}
		if maxNS < 0 {
			return usageError(fmt.Errorf("--max-namespaces %d: must not be negative (0: every namespace)", maxNS))
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		c, err := census.Take(ctx, census.Options{MaxNamespaces: maxNS})
		if err != nil {
			return failure("census: %w", err)
		}
		// Pods by name where the kubelet's credentials list them; a
		// failure is said in the output, the verdict stands on the UIDs.
		root := g.hostRoot()
		proof.NamePods(ctx, root, distro.Find(root, g.distro).Kind, c)
		if err := g.print(c); err != nil {
			return failure("census: write output: %w", err)
		}
		return censusExit(c.Verdict)
	})
	cmd.Flags().IntVar(&maxNS, "max-namespaces", 0, "enter at most this many network namespaces besides the host's (0: all); more make the verdict \"cannot tell\" unless one already says no")
	return cmd
}

// censusExit is the census's exit status: 0 legacy-free, 1 not, 3 cannot
// tell (verify's code for it), so a script never reads "not read" as free.
func censusExit(verdict string) error {
	switch verdict {
	case census.Yes:
		return nil
	case census.No:
		return silentExit(ExitFailure)
	}
	return silentExit(ExitCannotTell)
}
