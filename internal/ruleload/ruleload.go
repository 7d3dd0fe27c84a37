// Package ruleload loads canonical rule text (rules.FormatFamily) into a
// backend with that backend's own tool: nft -f, or the flavour's
// *-restore. It is the one writer of rules in the project, kept apart
// from the read-only netfilter readers: apply's trial loads a sample of
// kube-proxy's rules with it in a throwaway network namespace, bench
// times it there, and the netns tests load their fixtures with it. It
// never runs in the host's namespace: every caller enters a fresh one
// first.
package ruleload

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Argv is the command that loads one family's canonical text (rules.
// FormatFamily) into backend b with the backend's own tool: nft -f for
// nftables, the flavour's *-restore for the iptables backends. --noflush
// adds to what the namespace already holds (e.g. a reference dump); -w
// waits for the xtables lock (in tests, a file per test process: see
// nstest.EnvXtablesLock).
func Argv(b backend.Backend, fam rules.Family) []string {
	if b == backend.NFTables {
		return []string{hostfs.NFT, "-f", "-"}
	}
	restore := map[backend.Backend]map[rules.Family]string{
		backend.IptablesLegacy: {rules.IPv4: hostfs.IptablesLegacyRestore, rules.IPv6: hostfs.Ip6tablesLegacyRestore},
		backend.IptablesNFT:    {rules.IPv4: hostfs.IptablesNFTRestore, rules.IPv6: hostfs.Ip6tablesNFTRestore},
	}[b][fam]
	return []string{restore, "-w", "5", "--noflush"}
}

// Load loads family fam of rs into backend b with Argv's command (in the
// caller's network namespace: tests call it inside nstest.InNetns).
func Load(b backend.Backend, rs *rules.Ruleset, fam rules.Family) error {
	return LoadText(b, fam, rules.FormatFamily(rs, fam))
}

// LoadText is Load for text already in canonical form, one family's
// section (rules.SplitFamilies), as a render prints it.
func LoadText(b backend.Backend, fam rules.Family, text string) error {
	argv := Argv(b, fam)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("loading %s %s rules with %v: %w\n%s", b, fam, argv, err, out)
	}
	return nil
}
