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
	// ReadOptions say how much a read returns: all of it by default,
	// verify.ReadOptions for verify (verify.NewReader).
	ReadOptions

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

// Read reads backend b's whole ruleset, both families. A backend stored
// in nf_tables while nf_tables is not loaded holds no rules (NotLoaded):
// the kernel is not asked, as asking would load it.
func (s *System) Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	switch b {
	case backend.IptablesLegacy:
		return s.readLegacy(ctx)
	case backend.IptablesNFT, backend.NFTables:
		if s.NotLoaded(b) != "" {
			return &rules.Ruleset{Backend: b}, nil
		}
		return readNetlink(ctx, b, s.ReadOptions)
	}
	return nil, fmt.Errorf("reading rules: unknown backend %q (valid: %s)", b, backend.Names())
}
