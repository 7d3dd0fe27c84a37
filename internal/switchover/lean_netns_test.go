package switchover

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// counting is cleanup.Exec that records the tool of each run.
type counting struct {
	mu   sync.Mutex
	runs []string
}

func (c *counting) run(ctx context.Context, stdin string, argv ...string) (string, error) {
	c.mu.Lock()
	c.runs = append(c.runs, argv[0])
	c.mu.Unlock()
	return cleanup.Exec(ctx, stdin, argv...)
}

// The switch's clean and tidy steps read in this process and run a tool
// only for a family with something to remove: a backend holding nothing
// of the group runs none (it ran a *-save per family, four for the tidy),
// and kube-proxy's rules in legacy's ipv4 alone run one restore, for ipv4
// (the jumps' text is kube-proxy's own: no save), and are gone after.
func TestCleanRunsToolsOnlyToRemoveInNetns(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy-save", "iptables-legacy-restore", "iptables-nft-save", "iptables-nft-restore", "ip6tables-legacy-save", "ip6tables-nft-save") {
		return
	}
	ctx := context.Background()
	rs, err := expected.Render(expected.Options{Backend: backend.IptablesLegacy, Services: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs.Tables {
		rs.Tables[i].Chains = slices.DeleteFunc(rs.Tables[i].Chains, func(c rules.Chain) bool { return ownership.IsKubeletHintChain(c.Name) })
	}
	if err := ruleload.Load(backend.IptablesLegacy, rs, rules.IPv4); err != nil {
		t.Fatal(err)
	}

	c := &counting{}
	p, err := LiveCleaner{Run: c.run}.Clean(ctx, backend.IptablesNFT, backend.IptablesLegacy)
	if err != nil || !p.Empty() || len(c.runs) != 0 {
		t.Errorf("clean of an empty iptables-nft: %+v %v, tools run: %q (want none)", p, err, c.runs)
	}
	c = &counting{}
	tidy, err := LiveHints{Run: c.run}.Tidy(ctx, backend.IptablesNFT)
	if err != nil || len(tidy.Removed)+len(tidy.Left) != 0 || len(c.runs) != 0 {
		t.Errorf("tidy with no kubelet chains: %+v %v, tools run: %q (want none)", tidy, err, c.runs)
	}

	c = &counting{}
	p, err = LiveCleaner{Run: c.run}.Clean(ctx, backend.IptablesLegacy, backend.IptablesNFT)
	if err != nil || p.Empty() {
		t.Fatalf("clean of kube-proxy's legacy rules: %+v %v", p, err)
	}
	if want := []string{"iptables-legacy-restore"}; !slices.Equal(base(c.runs), want) {
		t.Errorf("tools run: %q, want %q (ipv4 only)", c.runs, want)
	}
	left, err := inProcess(ctx, backend.IptablesLegacy)
	if err != nil {
		t.Fatal(err)
	}
	if o := ownership.KubeProxyOnly.Find(left, false); len(o.Chains)+len(o.Jumps) > 0 {
		t.Errorf("kube-proxy's rules left in legacy: %+v", o)
	}
}

func base(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p[strings.LastIndexByte(p, '/')+1:]
	}
	return out
}

// A jump that is not kube-proxy's own text (an older kube-proxy's, without
// the conntrack match; another writer's with the same comment) matches no
// rule in the restore with kube-proxy's text, which then changes nothing:
// the clean reads with *-save after all and removes every jump as read.
// Both iptables backends: each checks a "-D" by its own rule comparison.
func TestCleanReadsWithSaveWhenAJumpIsNotKubeProxysInNetns(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy-save", "iptables-legacy-restore", "iptables-legacy", "iptables-nft-save", "iptables-nft-restore", "iptables-nft") {
		return
	}
	ctx := context.Background()
	for _, b := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		t.Run(string(b), func(t *testing.T) {
			nstest.Flush(t, b)
			rs, err := expected.Render(expected.Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			for i := range rs.Tables {
				rs.Tables[i].Chains = slices.DeleteFunc(rs.Tables[i].Chains, func(c rules.Chain) bool { return ownership.IsKubeletHintChain(c.Name) })
			}
			if err := ruleload.Load(b, rs, rules.IPv4); err != nil {
				t.Fatal(err)
			}
			c := &counting{}
			p, err := LiveCleaner{Run: c.run}.Clean(ctx, b, backend.NFTables)
			if err != nil || p.Empty() || len(c.runs) != 1 {
				t.Fatalf("clean of kube-proxy's own rules: %+v %v, tools run %q (want one restore)", p, err, c.runs)
			}
			if err := ruleload.Load(b, rs, rules.IPv4); err != nil {
				t.Fatal(err)
			}
			nstest.Sh(t, string(b)+` -w -I INPUT -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES`)
			c = &counting{}
			p, err = LiveCleaner{Run: c.run}.Clean(ctx, b, backend.NFTables)
			if err != nil || p.Empty() {
				t.Fatalf("clean: %+v %v", p, err)
			}
			if want := []string{string(b) + "-restore", string(b) + "-save", string(b) + "-restore"}; !slices.Equal(base(c.runs), want) {
				t.Errorf("tools run: %q, want %q (kube-proxy's text first, then as read)", c.runs, want)
			}
			if !slices.Contains(p.Removals, "ipv4 filter rule: -A INPUT -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES") {
				t.Errorf("the older jump is not among the removals:\n%s", strings.Join(p.Removals, "\n"))
			}
			if left := nstest.Sh(t, string(b)+"-save"); strings.Contains(left, "KUBE-EXTERNAL-SERVICES") || strings.Contains(left, "KUBE-SERVICES") {
				t.Errorf("kube-proxy's rules left:\n%s", left)
			}
		})
	}
}
