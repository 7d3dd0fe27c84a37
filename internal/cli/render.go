package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

func newRenderCommand(g *globals) *cobra.Command {
	// render has no output of its own: it only says which subcommand to use.
	cmd := flagsOnly(spec{"render", "Print kube-proxy rules as canonical, loadable text", "render", textOnly}, func(cmd *cobra.Command) error {
		return usageError(fmt.Errorf("render needs a subcommand: expected or live"))
	})
	cmd.AddCommand(newRenderExpectedCommand(g), newRenderLiveCommand(g))
	return cmd
}

func newRenderExpectedCommand(g *globals) *cobra.Command {
	var (
		backendName, kube, family string
		services                  int
	)
	cmd := flagsOnly(spec{"expected --backend B [--kubernetes v1.33] [--family ipv4|ipv6] [--services N]", "Print the rules kube-proxy is expected to write", "", printsJSON}, func(cmd *cobra.Command) error {
		b, err := backendFlag("--backend", backendName, true)
		if err != nil {
			return usageError(err)
		}
		opts, err := expected.FlagOptions(b, kube, family, services)
		if err != nil {
			return usageError(err)
		}
		rs, err := expected.Render(opts)
		if err != nil {
			return failure("render expected: %w", err)
		}
		return g.print(rules.Rulesets{rs})
	})
	f := cmd.Flags()
	f.StringVar(&backendName, "backend", "", "backend: "+backend.Names()+" (required)")
	f.StringVar(&kube, "kubernetes", "", "Kubernetes version, e.g. v1.33 (default: the newest layout known)")
	f.StringVar(&family, "family", "", "only this IP family: ipv4 or ipv6 (default: both)")
	f.IntVar(&services, "services", 0, "add N synthetic services")
	return cmd
}

func newRenderLiveCommand(g *globals) *cobra.Command {
	var backendName string
	cmd := flagsOnly(spec{"live [--backend B|all]", "Print the live rules of each backend, canonical and diffable", "render-live", printsJSON}, func(cmd *cobra.Command) error {
		only, err := backendOrAll("--backend", backendName)
		if err != nil {
			return usageError(err)
		}
		out, err := netfilter.ReadEach(cmd.Context(), netfilter.NewSystem(g.hostRoot()), only, func(b backend.Backend, err error) {
			fmt.Fprintf(g.stderr, "rke2-proxy-backend: skipping %s: %v\n", b, err)
		})
		if err != nil {
			return failure("render live: %w", err)
		}
		return g.print(out)
	})
	cmd.Flags().StringVar(&backendName, "backend", "all", "backend to read: "+backend.Names()+" or all")
	return cmd
}
