package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/costbench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

func newBenchCommand(g *globals) *cobra.Command {
	var (
		services    int
		backendName string
	)
	cmd := flagsOnly(spec{"bench [--services N] [--backend B|all]", "Measure what kube-proxy's rule loads cost on this node, per backend", "bench", printsJSON}, func(cmd *cobra.Command) error {
		if costbench.IsChild() {
			if code := costbench.ChildMain(cmd.Context(), g.stdout, g.stderr); code != 0 {
				return silentExit(ExitFailure)
			}
			return nil
		}
		if services < 1 || services > expected.MaxServices {
			return usageError(fmt.Errorf("--services %d: must be between 1 and %d", services, expected.MaxServices))
		}
		only, err := backendOrAll("--backend", backendName)
		if err != nil {
			return usageError(err)
		}
		rep, data, err := costbench.OnHost(cmd.Context(), g.hostRoot(), services, only, g.stderr)
		if err != nil {
			return failure("%w", err)
		}
		return costbench.Write(g.stdout, rep, data, g.json())
	})
	f := cmd.Flags()
	f.IntVar(&services, "services", costbench.DefaultServices, fmt.Sprintf("cluster size to measure: services (2 endpoints each), 1 to %d", expected.MaxServices))
	f.StringVar(&backendName, "backend", "all", "backend to measure: "+backend.Names()+" or all (those this host can run)")
	return cmd
}
