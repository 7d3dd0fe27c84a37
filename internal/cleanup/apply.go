package cleanup

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/iptsave"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Runner runs a tool with stdin and returns its stdout; tests and the CLI
// use Exec, which runs the real binary.
type Runner func(ctx context.Context, stdin string, argv ...string) (string, error)

// Exec runs argv[0] from PATH; a missing one is a hostfs.MissingToolError.
func Exec(ctx context.Context, stdin string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if err := hostfs.MissingTool(argv[0], "cleanup", err); hostfs.IsMissingTool(err) {
			return "", err
		}
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// tools are the dump and load commands of one iptables backend and family.
func tools(b backend.Backend, fam rules.Family) (save, restore string) {
	switch {
	case b == backend.IptablesNFT && fam == rules.IPv6:
		return hostfs.Ip6tablesNFTSave, hostfs.Ip6tablesNFTRestore
	case b == backend.IptablesNFT:
		return hostfs.IptablesNFTSave, hostfs.IptablesNFTRestore
	case fam == rules.IPv6:
		return hostfs.Ip6tablesLegacySave, hostfs.Ip6tablesLegacyRestore
	}
	return hostfs.IptablesLegacySave, hostfs.IptablesLegacyRestore
}

// Read returns backend b's live rules as cleanup needs them: for the
// iptables backends exactly as *-save prints them (so every "-D" matches
// the kernel's rule), one plain *-save call per family (no -t: on legacy
// that would create tables); for nftables every ip and ip6 table's name,
// from one netlink dump (Compute picks kube-proxy's).
func Read(ctx context.Context, run Runner, b backend.Backend) (*rules.Ruleset, error) {
	return ReadFamilies(ctx, run, b, rules.IPv4, rules.IPv6)
}

// ReadFamilies is Read of the iptables backends' families fams only (one
// *-save each): a caller that knows a family holds nothing to remove
// runs no tool for it. nftables is read whole.
func ReadFamilies(ctx context.Context, run Runner, b backend.Backend, fams ...rules.Family) (*rules.Ruleset, error) {
	rs := &rules.Ruleset{Backend: b}
	if b == backend.NFTables {
		tables, err := netfilter.NFTTables(ctx)
		if err != nil {
			return nil, fmt.Errorf("list nftables tables: %w", err)
		}
		rs.Tables = tables
		return rs, nil
	}
	for _, fam := range fams {
		save, _ := tools(b, fam)
		out, err := run(ctx, "", save)
		if err != nil {
			return nil, fmt.Errorf("read %s %s rules: %w", b, fam, err)
		}
		tables, err := iptsave.Parse(strings.NewReader(out), fam)
		if err != nil {
			return nil, fmt.Errorf("parse %s output: %w", save, err)
		}
		rs.Tables = append(rs.Tables, tables...)
	}
	return rs, nil
}

// Apply runs p's transactions, one per family, each all-or-nothing.
func Apply(ctx context.Context, run Runner, p *Plan) error {
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		script, ok := p.Scripts[fam]
		if !ok {
			continue
		}
		argv := []string{hostfs.NFT, "-f", "-"}
		if p.Backend != backend.NFTables {
			_, restore := tools(p.Backend, fam)
			argv = []string{restore, "-w", "5", "--noflush"}
		}
		if _, err := run(ctx, script, argv...); err != nil {
			return fmt.Errorf("remove kube-proxy's %s %s rules: %w", p.Backend, fam, err)
		}
	}
	return nil
}
