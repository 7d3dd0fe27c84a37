package expected

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// refDir is the upstream dumps in the repo's testdata.
func refDir(t *testing.T) string { return nstest.RefDir(t) }

func render(t *testing.T, opts Options) *rules.Ruleset {
	t.Helper()
	rs, err := Render(opts)
	if err != nil {
		t.Fatalf("Render(%+v): %v", opts, err)
	}
	return rs
}

func findChain(rs *rules.Ruleset, fam rules.Family, table, chain string) *rules.Chain {
	for ti := range rs.Tables {
		t := &rs.Tables[ti]
		if t.Family != fam || t.Name != table {
			continue
		}
		for ci := range t.Chains {
			if t.Chains[ci].Name == chain {
				return &t.Chains[ci]
			}
		}
	}
	return nil
}

// The chain-name hashes must be kube-proxy's: these names are in the
// upstream dumps (iptables-overall-v4.restore, nftables-overall-v4.knft).
func TestHashesMatchKubeProxy(t *testing.T) {
	cases := map[string]string{
		IptablesServiceChain("ns1/svc1:p80", "tcp"):                             "KUBE-SVC-XPGD46QRK7WJZT7O",
		IptablesEndpointChain("ns1/svc1:p80", "tcp", "10.180.0.1:80"):           "KUBE-SEP-SXIVWICOYRO3J4NJ",
		IptablesEndpointChain("ns4/svc4:p80", "tcp", "10.180.0.5:80"):           "KUBE-SEP-C6EBXVWJJZMIWKLZ",
		NFTablesChainBase("ns1", "svc1", "tcp", "p80"):                          "ULMVA6XW-ns1/svc1/tcp/p80",
		NFTablesEndpointChainBase("ns1", "svc1", "tcp", "p80", "10.180.0.1:80"): "5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80",
		NFTablesEndpointChainBase("ns4", "svc4", "tcp", "p80", "10.180.0.5:80"): "5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

// Every family carries the 14 base-chain jumps; IPv6 lacks kubelet's
// localnet rule but keeps kube-proxy's own KUBE-FIREWALL jumps.
func TestIptablesSkeletonPerFamily(t *testing.T) {
	rs := render(t, Options{Backend: backend.IptablesLegacy})
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		jumps := 0
		for _, tbl := range rs.Tables {
			if tbl.Family != fam {
				continue
			}
			for _, c := range tbl.Chains {
				if c.Hook == "" {
					continue
				}
				for _, r := range c.Rules {
					if r.Jump == "" {
						t.Errorf("%s %s %s: rule %q has no jump", fam, tbl.Name, c.Name, r.Text)
					}
					jumps++
				}
			}
		}
		if jumps != baseJumpCount {
			t.Errorf("%s: %d base-chain jumps, want %d", fam, jumps, baseJumpCount)
		}
		fw := findChain(rs, fam, "filter", "KUBE-FIREWALL")
		if fw == nil {
			t.Fatalf("%s: no filter KUBE-FIREWALL", fam)
		}
		if got, want := len(fw.Rules), map[rules.Family]int{rules.IPv4: 1, rules.IPv6: 0}[fam]; got != want {
			t.Errorf("%s: KUBE-FIREWALL has %d rules, want %d", fam, got, want)
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			for _, c := range []string{"KUBE-PROXY-CANARY", "KUBE-KUBELET-CANARY"} {
				if findChain(rs, fam, table, c) == nil {
					t.Errorf("%s: no %s %s", fam, table, c)
				}
			}
		}
	}
}

// The base chains must hold exactly the jumps the simulated kube-proxy
// startup leaves (reference derived/iptables-legacy-save.after-simulated-startup.txt),
// in the same order.
func TestIptablesJumpsMatchReference(t *testing.T) {
	f, err := os.Open(filepath.Join(refDir(t), "derived", "iptables-legacy-save.after-simulated-startup.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]string{}
	table := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "*") {
			table = line[1:]
		}
		for _, b := range builtins[table] {
			if rest, ok := strings.CutPrefix(line, "-A "+b+" "); ok {
				want[table+" "+b] = append(want[table+" "+b], rest)
			}
		}
	}
	rs := render(t, Options{Backend: backend.IptablesLegacy, Families: []rules.Family{rules.IPv4}})
	got := map[string][]string{}
	for _, tbl := range rs.Tables {
		for _, c := range tbl.Chains {
			for _, r := range c.Rules {
				if c.Hook != "" {
					got[tbl.Name+" "+c.Name] = append(got[tbl.Name+" "+c.Name], r.Text)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("base-chain jumps differ from the reference\n got: %q\nwant: %q", got, want)
	}
}

var (
	nftChainRE = regexp.MustCompile(`^add chain ip kube-proxy (\S+)(?: \{ type (\S+) hook (\S+) priority (-?\d+) ; \}| \{ comment "(.*)" ; \})?$`)
	nftSetRE   = regexp.MustCompile(`^add (set|map) ip kube-proxy (\S+) \{ type (.*) ; comment "(.*)" ; \}$`)
	nftRuleRE  = regexp.MustCompile(`^add rule ip kube-proxy (\S+) (.*)$`)
)

// The 1.34 nftables skeleton must match upstream's baseRules: chains with
// hooks and priorities, sets and maps, and the rules of the base chains.
func TestNFTablesSkeletonMatchesReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(refDir(t), "nftables-base-v4.knft"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	base := map[string]bool{}
	var ruleLines []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if m := nftChainRE.FindStringSubmatch(line); m != nil {
			want["chain "+m[1]] = strings.TrimSpace(strings.Join(m[2:], " "))
			base[m[1]] = m[2] != ""
		}
		if m := nftSetRE.FindStringSubmatch(line); m != nil {
			want[m[1]+" "+m[2]] = m[3] + " | " + m[4]
		}
		ruleLines = append(ruleLines, line)
	}
	rs := render(t, Options{Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 34}, Families: []rules.Family{rules.IPv4}})
	if len(rs.Tables) != 1 || rs.Tables[0].Name != vocab.NFTablesTable || rs.Tables[0].Comment != TableComment {
		t.Fatalf("want one table %q with comment %q, got %+v", vocab.NFTablesTable, TableComment, rs.Tables)
	}
	got := map[string]string{}
	for _, c := range rs.Tables[0].Chains {
		v := c.Comment
		if c.Hook != "" {
			v = c.Type + " " + c.Hook + " " + itoa(c.Priority)
		}
		got["chain "+c.Name] = v
		if !base[c.Name] {
			continue
		}
		for _, r := range c.Rules {
			line := "add rule ip kube-proxy " + c.Name + " " + r.Text
			if !contains(ruleLines, line) {
				t.Errorf("rule %q is not in upstream baseRules", line)
			}
		}
	}
	for _, s := range rs.Tables[0].Sets {
		kind := "set"
		if s.Map {
			kind = "map"
		}
		got[kind+" "+s.Name] = s.Type + " | " + s.Comment
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skeleton differs from upstream baseRules\n got: %q\nwant: %q", got, want)
	}
}

func TestNFTablesLayoutByVersion(t *testing.T) {
	old := render(t, Options{Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 32}, Families: []rules.Family{rules.IPv6}})
	names := map[string]int{}
	for _, c := range old.Tables[0].Chains {
		if c.Hook != "" {
			names[c.Name] = c.Priority
		}
	}
	want := map[string]int{"filter-prerouting": -110, "filter-input": -110, "filter-forward": -110, "filter-output": -110,
		"filter-output-post-dnat": -90, "nat-prerouting": -100, "nat-output": -100, "nat-postrouting": 100}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("1.32 base chains = %v, want %v", names, want)
	}
	if old.Tables[0].Family != rules.IPv6 || old.Tables[0].Sets[0].Type != "ipv6_addr" {
		t.Errorf("ipv6 table: family %s, cluster-ips type %s", old.Tables[0].Family, old.Tables[0].Sets[0].Type)
	}
	if _, err := Render(Options{Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 28}}); err == nil {
		t.Error("nftables for v1.28 rendered, want an error")
	}
}

func TestServices(t *testing.T) {
	const n = 50
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		rs := render(t, Options{Backend: backend.IptablesNFT, Services: n, Families: []rules.Family{fam}})
		svc, sep := 0, 0
		for _, tbl := range rs.Tables {
			for _, c := range tbl.Chains {
				switch {
				case strings.HasPrefix(c.Name, "KUBE-SVC-"):
					svc++
				case strings.HasPrefix(c.Name, "KUBE-SEP-"):
					sep++
				}
			}
		}
		if svc != n || sep != n*endpointsPerService {
			t.Errorf("%s: %d KUBE-SVC and %d KUBE-SEP chains, want %d and %d", fam, svc, sep, n, n*endpointsPerService)
		}
		ks := findChain(rs, fam, "nat", "KUBE-SERVICES")
		if len(ks.Rules) != n+1 || ks.Rules[n].Jump != "KUBE-NODEPORTS" {
			t.Errorf("%s: nat KUBE-SERVICES has %d rules, last %q; want %d ending in the KUBE-NODEPORTS jump", fam, len(ks.Rules), ks.Rules[len(ks.Rules)-1].Text, n+1)
		}
		nft := render(t, Options{Backend: backend.NFTables, Services: n, Families: []rules.Family{fam}})
		for _, s := range nft.Tables[0].Sets {
			if (s.Name == "service-ips" || s.Name == "cluster-ips") && len(s.Elements) != n {
				t.Errorf("%s: %s has %d elements, want %d", fam, s.Name, len(s.Elements), n)
			}
		}
	}
	a := render(t, Options{Backend: backend.NFTables, Services: 3})
	b := render(t, Options{Backend: backend.NFTables, Services: 3})
	if !reflect.DeepEqual(a, b) {
		t.Error("two renders of the same options differ")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
