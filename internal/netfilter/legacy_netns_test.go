package netfilter

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// tracepacketFixture is the reference dump with quotes and backslashes in
// its comments (nstest.RefDir), loaded by the iptables readers' tests.
const tracepacketFixture = "derived/iptables-tracepacket-fixture-v4.quoted.save"

// loadTracepacketFixture is nstest.Setup with loader < the fixture: false
// in the parent (the caller returns), true inside the fresh namespace with
// the fixture loaded.
func loadTracepacketFixture(t *testing.T, loader string) bool {
	t.Helper()
	ref := nstest.RefDir(t)
	return nstest.Setup(t, loader+" < "+filepath.Join(ref, tracepacketFixture), loader)
}

// loadReferenceDumps is nstest.Setup with the upstream reference dumps
// (kube-proxy's and kubelet's rules at startup, derived/simulate-startup.sh)
// loaded with iptables flavour "legacy" or "nft".
func loadReferenceDumps(t *testing.T, flavour string) bool {
	t.Helper()
	ref := nstest.RefDir(t)
	return nstest.Setup(t, "sh "+filepath.Join(ref, "derived/simulate-startup.sh")+" "+flavour+" 2>&1", "iptables-"+flavour+"-save", "nfacct")
}

// readText reads backend b in the current namespace and returns its
// canonical text.
func readText(t *testing.T, b backend.Backend) (*rules.Ruleset, string) {
	t.Helper()
	rs, err := NewSystem(hostfs.New("/")).Read(context.Background(), b)
	if err != nil {
		t.Fatalf("reading %s: %v", b, err)
	}
	return rs, rules.Format(rs)
}

// roundTrip empties backend b, loads the render text back family by
// family with ruleload (what apply's trial and bench load with) and checks
// that reading again renders the same text.
func roundTrip(t *testing.T, b backend.Backend, text string) {
	t.Helper()
	nstest.Flush(t, b)
	parts, err := rules.SplitFamilies(text)
	if err != nil {
		t.Fatal(err)
	}
	for fam, body := range parts {
		if err := ruleload.LoadText(b, fam, body); err != nil {
			t.Fatalf("%v\n--- input:\n%s", err, body)
		}
	}
	if _, again := readText(t, b); again != text {
		t.Errorf("round trip differs:\n--- first\n%s\n--- second\n%s", text, again)
	}
}

// assertDecoded fails if the render holds a rules.Unsupported marker.
func assertDecoded(t *testing.T, text string) {
	t.Helper()
	if strings.Contains(text, "UNSUPPORTED") {
		t.Errorf("render has undecoded expressions:\n%s", text)
	}
}

// TestIptablesReferenceDumps loads the upstream reference dumps with each
// iptables flavour and holds the reader to that flavour's own save: the
// kube-proxy skeleton is there, the text equals *-save's output minus its
// comments and counters, every expression is decoded, the nftables reader
// sees none of it, and the render loads back identical (round trip).
func TestIptablesReferenceDumps(t *testing.T) {
	for _, b := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		t.Run(string(b), func(t *testing.T) {
			if !loadReferenceDumps(t, strings.TrimPrefix(string(b), "iptables-")) {
				return
			}
			rs, text := readText(t, b)
			assertKubeProxySkeleton(t, rs)
			assertSameAsSave(t, b, rs)
			assertDecoded(t, text)
			if nft, _ := readText(t, backend.NFTables); len(nft.Tables) != 0 {
				t.Errorf("nftables reader sees %+v", nft.Tables)
			}
			roundTrip(t, b, text)
		})
	}
}

func TestLegacyTracepacketFixture(t *testing.T) {
	if !loadTracepacketFixture(t, "iptables-legacy-restore") {
		return
	}
	rs, text := readText(t, backend.IptablesLegacy)
	assertBaseJumps(t, rs, map[string][]string{
		// The fixture's own base-chain jumps (it has no firewall chains).
		"filter/INPUT":    {"KUBE-NODEPORTS", "KUBE-EXTERNAL-SERVICES"},
		"filter/FORWARD":  {"KUBE-FORWARD", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES"},
		"filter/OUTPUT":   {"KUBE-SERVICES"},
		"nat/PREROUTING":  {"KUBE-SERVICES"},
		"nat/OUTPUT":      {"KUBE-SERVICES"},
		"nat/POSTROUTING": {"KUBE-POSTROUTING"},
	})
	roundTrip(t, backend.IptablesLegacy, text)
}

// assertKubeProxySkeleton checks the chains, the 14 base-chain jumps and
// their comments that kube-proxy and kubelet write at startup (DOMAIN.md 4).
func assertKubeProxySkeleton(t *testing.T, rs *rules.Ruleset) {
	t.Helper()
	assertBaseJumps(t, rs, map[string][]string{
		"filter/INPUT":      {"KUBE-PROXY-FIREWALL", "KUBE-NODEPORTS", "KUBE-EXTERNAL-SERVICES", "KUBE-FIREWALL"},
		"filter/FORWARD":    {"KUBE-PROXY-FIREWALL", "KUBE-FORWARD", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES"},
		"filter/OUTPUT":     {"KUBE-PROXY-FIREWALL", "KUBE-SERVICES", "KUBE-FIREWALL"},
		"nat/PREROUTING":    {"KUBE-SERVICES"},
		"nat/OUTPUT":        {"KUBE-SERVICES"},
		"nat/POSTROUTING":   {"KUBE-POSTROUTING"},
		"mangle/PREROUTING": nil,
	})
	comments := map[string]string{}
	for _, tb := range rs.Tables {
		for _, c := range tb.Chains {
			for _, r := range c.Rules {
				if r.Jump != "" && c.Hook != "" {
					comments[tb.Name+"/"+c.Name+"->"+r.Jump] = r.Comment
				}
			}
		}
	}
	for k, want := range map[string]string{
		"nat/PREROUTING->KUBE-SERVICES":      "kubernetes service portals",
		"nat/POSTROUTING->KUBE-POSTROUTING":  "kubernetes postrouting rules",
		"filter/FORWARD->KUBE-FORWARD":       "kubernetes forwarding rules",
		"filter/INPUT->KUBE-NODEPORTS":       "kubernetes health check service ports",
		"filter/OUTPUT->KUBE-PROXY-FIREWALL": "kubernetes load balancer firewall",
		"filter/INPUT->KUBE-FIREWALL":        "",
	} {
		if got, ok := comments[k]; !ok || got != want {
			t.Errorf("jump %s: comment %q (present %v), want %q", k, got, ok, want)
		}
	}
	for _, tc := range []struct{ table, chain string }{
		{"nat", "KUBE-MARK-MASQ"}, {"nat", "KUBE-PROXY-CANARY"}, {"filter", "KUBE-PROXY-CANARY"},
		{"mangle", "KUBE-PROXY-CANARY"}, {"mangle", "KUBE-IPTABLES-HINT"}, {"mangle", "KUBE-KUBELET-CANARY"},
		{"nat", "KUBE-SVC-XPGD46QRK7WJZT7O"}, {"nat", "KUBE-SEP-SXIVWICOYRO3J4NJ"},
	} {
		if !hasChain(rs, tc.table, tc.chain) {
			t.Errorf("chain %s/%s missing", tc.table, tc.chain)
		}
	}
}

func assertBaseJumps(t *testing.T, rs *rules.Ruleset, want map[string][]string) {
	t.Helper()
	for where, jumps := range want {
		table, chain, _ := strings.Cut(where, "/")
		var got []string
		found := false
		for _, tb := range rs.Tables {
			if tb.Family != rules.IPv4 || tb.Name != table {
				continue
			}
			for _, c := range tb.Chains {
				if c.Name == chain {
					found = true
					for _, r := range c.Rules {
						if r.Jump != "" {
							got = append(got, r.Jump)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: chain missing", where)
		} else if strings.Join(got, " ") != strings.Join(jumps, " ") {
			t.Errorf("%s jumps = %v, want %v", where, got, jumps)
		}
	}
}

func hasChain(rs *rules.Ruleset, table, chain string) bool {
	for _, tb := range rs.Tables {
		for _, c := range tb.Chains {
			if tb.Name == table && c.Name == chain {
				return true
			}
		}
	}
	return false
}
