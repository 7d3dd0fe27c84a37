package netfilter

import (
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// System reads the kernel of the current network namespace.
type System struct {
	// Root resolves /proc/net paths (the legacy table lists).
	Root hostfs.Root
	// Legacy dump tools, looked up in PATH.
	IptablesLegacySave  string
	Ip6tablesLegacySave string
	// Shallow skips the elements of nftables anonymous sets (kube-proxy's
	// per-service endpoint vmaps). The kernel finds each set by a linear
	// walk over the table's sets, so listing every one is quadratic in the
	// number of services, for nft too. A rule using one then shows
	// "{ UNSUPPORTED[elements not read] }", which does not load. verify,
	// which checks the skeleton, sets it; render live does not. Legacy
	// tables are then read in-process (no save tool) and every rule is
	// rules.RuleNotRead with only its Jump and Comment.
	Shallow bool
	// SkipChain, with Shallow, names iptables chains whose rules are only
	// counted (kept as rules.RuleNotRead): verify sets kube-proxy's
	// per-service chains, most of a large legacy ruleset, which it never
	// looks inside. iptables-nft rules come whole from one netlink dump.
	SkipChain func(chain string) bool

	// Seams for unit tests: lookPath finds a tool, run runs it with no
	// arguments, streaming stdout to parse, and returns its stderr.
	lookPath func(string) (string, error)
	run      func(ctx context.Context, path string, parse func(io.Reader)) (string, error)
}

// NewSystem returns a reader of the live kernel with the default tools.
func NewSystem(root hostfs.Root) *System {
	return &System{
		Root:                root,
		IptablesLegacySave:  hostfs.IptablesLegacySave,
		Ip6tablesLegacySave: hostfs.Ip6tablesLegacySave,
		lookPath:            exec.LookPath,
		run:                 execRun,
	}
}

// Read reads backend b's whole ruleset, both families.
func (s *System) Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	switch b {
	case backend.IptablesLegacy:
		return s.readLegacy(ctx)
	case backend.IptablesNFT, backend.NFTables:
		return readNetlink(ctx, b, s.Shallow)
	}
	return nil, fmt.Errorf("reading rules: unknown backend %q (valid: %s)", b, backend.Names())
}
