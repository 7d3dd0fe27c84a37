package verify_test

// The oracle matrix: kube-proxy's real proxiers (internal/oracle, one build
// per Kubernetes minor) program each backend in a throwaway network
// namespace, and verify, render live, cleanup and detect are judged on
// those rules, not on this project's own renderer. Each cell (minor,
// backend, services) programs once and runs every check on the same
// namespace, restoring the programmed rules between destructive checks.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts/live"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// matrixSizes are the Service counts of each cell: a small cluster, and
// one large enough that a reader or loader quadratic in rules shows.
var matrixSizes = []int{10, 2000}

var bothFamilies = []rules.Family{rules.IPv4, rules.IPv6}

func TestOracleMatrix(t *testing.T) {
	start := time.Now()
	t.Run("cells", func(t *testing.T) {
		for _, minor := range oracle.Minors {
			for _, b := range backend.All {
				if why := oracle.Lacks(minor, b); why != "" {
					t.Logf("%s/%s: not in the matrix: %s", minor, b, why)
					continue
				}
				for _, n := range matrixSizes {
					t.Run(fmt.Sprintf("%s/%s/%d", minor, b, n), func(t *testing.T) {
						// Each cell is its own process in its own namespace.
						t.Parallel()
						if !nstest.InNetns(t) {
							return
						}
						runCell(t, minor, b, n)
					})
				}
			}
		}
	})
	t.Logf("oracle matrix (%d minors x %d backends x %v services): %s",
		len(oracle.Minors), len(backend.All), matrixSizes, time.Since(start).Round(time.Second))
}

func runCell(t *testing.T, minor string, b backend.Backend, services int) {
	kv, err := rke2.ParseVersion(minor)
	if err != nil {
		t.Fatal(err)
	}
	tools(t, b)
	addForeign(t, b)
	base := snapshot(t, b)
	foreign := foreignSnapshot(t, b)
	oracle.Program(t, minor, b, oracle.Options{Services: services, IPv6: true})
	programmed := snapshot(t, b)
	if strings.Contains(programmed, "UNSUPPORTED") {
		t.Fatalf("render live of kube-proxy %s's %s rules has undecoded expressions:\n%s", minor, b, grepLines(programmed, "UNSUPPORTED"))
	}

	t.Run("render live loads back byte-identical", func(t *testing.T) {
		restore(t, b, programmed)
		if again := snapshot(t, b); again != programmed {
			t.Errorf("render live after loading its own output differs:\n%s", firstDiff(programmed, again))
		}
	})
	t.Run("healthy", func(t *testing.T) {
		for _, k := range []rke2.KubeVersion{kv, {}} {
			if res := runVerify(t, b, k, bothFamilies); !res.OK {
				t.Errorf("verify --kubernetes %q on kube-proxy %s's healthy %s rules:\n%s", k, minor, b, report(res))
			}
		}
	})
	t.Run("footprint model agrees with the proxier", func(t *testing.T) {
		live, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range footprintDisagreements(b, kv, bothFamilies, live) {
			t.Errorf("kube-proxy %s, %s: %s", minor, b, d)
		}
	})
	t.Run("detect", func(t *testing.T) {
		f := facts.Probe(hostfs.New("/"), facts.Options{Live: live.Read})
		if !slices.Equal(f.LiveRules.KubeProxy, []string{string(b)}) {
			t.Errorf("facts see kube-proxy rules in %v, want [%s]", f.LiveRules.KubeProxy, b)
		}
		if d := decide.Decide(f, config.Defaults()); d.Backend != b {
			t.Errorf("detect decides %s, want %s where the rules live; reasons %q", d.Backend, b, d.Reasons)
		}
	})
	for _, m := range mutations(b, kv) {
		t.Run("broken: "+m.name, func(t *testing.T) {
			defer restore(t, b, programmed)
			nstest.Sh(t, m.script)
			versions := []rke2.KubeVersion{kv, {}}
			if m.knownOnly {
				versions = versions[:1]
			}
			for _, k := range versions {
				res := runVerify(t, b, k, bothFamilies)
				text := report(res)
				if res.OK || !hasFinding(res, m.kind, b, m.family) {
					t.Errorf("verify --kubernetes %q after %s: want a %s finding for %s %s\n%s", k, m.name, m.kind, b, m.family, text)
				}
				for _, name := range m.names {
					if !strings.Contains(text, name) {
						t.Errorf("verify --kubernetes %q after %s does not name %q:\n%s", k, m.name, name, text)
					}
				}
			}
		})
	}
	// Last: it leaves kube-proxy's rules stranded and then cleans them.
	t.Run("stranded and cleanup", func(t *testing.T) {
		restore(t, b, programmed)
		other := liveBackend(b)
		loadRendered(t, other, kv)
		otherBefore := snapshot(t, other)
		res := runVerify(t, other, kv, bothFamilies)
		if !hasFinding(res, verify.KindStranded, b, "") {
			t.Errorf("kube-proxy uses %s, its old rules sit in %s: want stranded-rules@%s\n%s", other, b, b, report(res))
		}
		for _, f := range res.Findings {
			if f.Backend == other && f.Kind != verify.KindKubeletHint {
				t.Errorf("the live backend %s is complete, yet: [%s] %s", other, f.Kind, f.Message)
			}
		}
		ctx := context.Background()
		rs, err := cleanup.Read(ctx, cleanup.Exec, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := cleanup.Apply(ctx, cleanup.Exec, cleanup.Compute(rs)); err != nil {
			t.Fatal(err)
		}
		after := snapshot(t, b)
		if b.UsesIptables() {
			// kube-proxy ensures KUBE-FIREWALL and its INPUT/OUTPUT jumps in
			// both families (iptablesKubeletJumpChains); kubelet writes them
			// for IPv4 only. The chain is kubelet's by name, and kube-proxy's
			// own CleanupLeftovers keeps it too, so the empty IPv6 copy stays.
			after = withoutFamilyLines(t, after, rules.IPv6, ":KUBE-FIREWALL - [0:0]", "-A INPUT -j KUBE-FIREWALL", "-A OUTPUT -j KUBE-FIREWALL")
		}
		if after != base {
			t.Errorf("cleanup of %s left other than what was there before kube-proxy:\n%s", b, firstDiff(base, after))
		}
		if after := foreignSnapshot(t, b); after != foreign {
			t.Errorf("cleanup of %s changed objects that are not kube-proxy's:\n%s", b, firstDiff(foreign, after))
		}
		if after := snapshot(t, other); after != otherBefore {
			t.Errorf("cleanup of %s changed the live backend %s:\n%s", b, other, firstDiff(otherBefore, after))
		}
	})
}

// TestOracleSingleStack: with IPv6 disabled in the namespace kube-proxy
// programs IPv4 only; verify, deciding the families from the node's facts,
// passes, and requiring IPv6 regardless would fail it.
func TestOracleSingleStack(t *testing.T) {
	for _, minor := range oracle.Minors {
		for _, b := range backend.All {
			o, notes, ok := oracle.Fit(minor, b, oracle.Options{Services: matrixSizes[0], IPv6: false, Kubelet: b != backend.NFTables})
			for _, n := range notes {
				t.Logf("%s/%s: %s", minor, b, n)
			}
			if !ok {
				continue
			}
			t.Run(minor+"/"+string(b), func(t *testing.T) {
				t.Parallel()
				if !nstest.InNetns(t) {
					return
				}
				kv, err := rke2.ParseVersion(minor)
				if err != nil {
					t.Fatal(err)
				}
				tools(t, b)
				nstest.Sh(t, "sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
				oracle.Program(t, minor, b, o)
				fams, why, err := facts.IPFamilies(hostfs.New("/"))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(fams, []rules.Family{rules.IPv4}) {
					t.Fatalf("with disable_ipv6=1 the facts give families %v", fams)
				}
				res := runVerifyWhy(t, b, kv, fams, why)
				if !res.OK {
					t.Errorf("single-stack node:\n%s", report(res))
				}
				if res := runVerify(t, b, kv, bothFamilies); res.OK || !hasFinding(res, "", b, rules.IPv6) {
					t.Errorf("requiring IPv6 on a single-stack node should fail on ipv6:\n%s", report(res))
				}
			})
		}
	}
}

// mutation breaks one thing verify must notice; names are what its report
// must mention. knownOnly: only verify told the node's minor must notice
// (without the version, the rules fit an older minor's layout).
type mutation struct {
	name, script string
	kind         string
	family       rules.Family
	names        []string
	knownOnly    bool
}

func mutations(b backend.Backend, kv rke2.KubeVersion) []mutation {
	if b == backend.NFTables {
		var since138 []mutation
		if kv.AtLeast(1, 38) {
			since138 = append(since138, mutation{"localhost NodePort rejects gone", deleteLocalhostNodePortRejects("ip"),
				verify.KindMissingChain, rules.IPv4, []string{
					"localhost-nodeport-reject-udp", "localhost-nodeport-reject-sctp",
					"localhost-nodeport-reject-ports", "localhost-nodeport-rejected-udp", "localhost-nodeport-rejected-sctp",
					"nodeport-endpoints-check has no rule with \"vmap @localhost-nodeport-reject-ports\"",
				}, true},
				mutation{"localhost NodePort reject counters and rule gone", deleteNFTRule("ip6", "nodeport-endpoints-check", "vmap @localhost-nodeport-reject-ports") +
					"; for p in tcp udp sctp; do nft flush chain ip6 kube-proxy localhost-nodeport-reject-$p; nft delete counter ip6 kube-proxy localhost-nodeport-rejected-$p; done",
					verify.KindMissingCounter, rules.IPv6, []string{"localhost-nodeport-rejected-udp", "localhost-nodeport-rejected-sctp", "vmap @localhost-nodeport-reject-ports"}, true})
		}
		return append([]mutation{
			{"nat prerouting and output jumps gone", "nft flush chain ip kube-proxy nat-prerouting; nft flush chain ip kube-proxy nat-output",
				verify.KindMissingJump, rules.IPv4, []string{"nat-prerouting -> services", "nat-output -> services"}, false},
			{"service-ips dispatch gone", deleteNFTRule("ip", "services", "vmap @service-ips"),
				verify.KindMissingDispatch, rules.IPv4, []string{"vmap @service-ips"}, false},
			{"service-nodeports dispatch gone", deleteNFTRule("ip6", "services", "vmap @service-nodeports"),
				verify.KindMissingDispatch, rules.IPv6, []string{"vmap @service-nodeports"}, false},
			{"flush table ip kube-proxy", "nft flush table ip kube-proxy",
				verify.KindMissingDispatch, rules.IPv4, []string{"ipv4 table kube-proxy lacks 11 base-chain jump(s)", "vmap @service-ips"}, false},
			{"ip6 table missing", "nft delete table ip6 kube-proxy",
				verify.KindMissingTable, rules.IPv6, []string{"ipv6 table kube-proxy"}, false},
		}, since138...)
	}
	ipt, ip6t := iptablesCmds(b)
	return []mutation{
		{"nat PREROUTING and OUTPUT jumps gone",
			ipt + ` -t nat -D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES; ` +
				ipt + ` -t nat -D OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
			verify.KindMissingJump, rules.IPv4, []string{"PREROUTING -> KUBE-SERVICES", "OUTPUT -> KUBE-SERVICES"}, false},
		{"KUBE-SERVICES dispatch gone", ip6t + " -t nat -F KUBE-SERVICES",
			verify.KindMissingDispatch, rules.IPv6, []string{"KUBE-SERVICES has no rule jumping to KUBE-NODEPORTS"}, false},
		{"nat table flushed", ipt + " -t nat -F",
			verify.KindMissingJump, rules.IPv4, []string{"POSTROUTING -> KUBE-POSTROUTING", "KUBE-NODEPORTS"}, false},
		{"ipv6 tables flushed", ip6t + " -t nat -F; " + ip6t + " -t nat -X; " + ip6t + " -t filter -F; " + ip6t + " -t filter -X",
			verify.KindMissingChain, rules.IPv6, []string{"ipv6 table nat lacks"}, false},
	}
}

// deleteLocalhostNodePortRejects removes 1.38's localhost NodePort objects
// from family's table, referrers first: the rule using the map, the map
// (its elements goto the chains), the chains (their rules name the
// counters), the counters.
func deleteLocalhostNodePortRejects(family string) string {
	return deleteNFTRule(family, "nodeport-endpoints-check", "vmap @localhost-nodeport-reject-ports") +
		"; nft delete map " + family + " kube-proxy localhost-nodeport-reject-ports" +
		"; for p in tcp udp sctp; do nft flush chain " + family + " kube-proxy localhost-nodeport-reject-$p; nft delete chain " + family + " kube-proxy localhost-nodeport-reject-$p; " +
		"nft delete counter " + family + " kube-proxy localhost-nodeport-rejected-$p; done"
}

func deleteNFTRule(family, chain, match string) string {
	return "nft -a list chain " + family + " kube-proxy " + chain + " | grep -F '" + match + "' | sed 's/.*# handle //' | " +
		"while read h; do nft delete rule " + family + " kube-proxy " + chain + " handle $h; done; " +
		"! nft list chain " + family + " kube-proxy " + chain + " | grep -qF '" + match + "'"
}

func iptablesCmds(b backend.Backend) (ipt, ip6t string) {
	flavour := strings.TrimPrefix(string(b), "iptables-")
	return "iptables-" + flavour + " -w", "ip6tables-" + flavour + " -w"
}

// liveBackend is the backend a node switched to while kube-proxy's rules
// of b stayed behind: another one sharing the kernel side where possible.
func liveBackend(b backend.Backend) backend.Backend {
	if b == backend.IptablesNFT {
		return backend.NFTables
	}
	return backend.IptablesNFT
}

func tools(t *testing.T, b backend.Backend) {
	t.Helper()
	nstest.Tool(t, "nft")
	for _, fam := range bothFamilies {
		nstest.Tool(t, ruleload.Argv(b, fam)[0])
	}
}

// addForeign adds what a node has besides kube-proxy: kubelet's chains
// (iptables backends) and a CNI's chains or table, which cleanup must keep.
func addForeign(t *testing.T, b backend.Backend) {
	t.Helper()
	if b == backend.NFTables {
		nstest.Sh(t, `nft -f - <<'EOF'
add table inet cni-test
add chain inet cni-test forward { type filter hook forward priority 0 ; }
add rule inet cni-test forward ip saddr 10.99.0.0/16 accept
EOF`)
		return
	}
	ipt, ip6t := iptablesCmds(b)
	nstest.Sh(t, ipt+` -t mangle -N KUBE-IPTABLES-HINT
`+ipt+` -t filter -N KUBE-FIREWALL
`+ipt+` -t filter -I OUTPUT -j KUBE-FIREWALL
`+ipt+` -t filter -I INPUT -j KUBE-FIREWALL
`+ipt+` -t filter -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" --dst 127.0.0.0/8 ! --src 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
for t in mangle nat filter; do `+ipt+` -t $t -N KUBE-KUBELET-CANARY; `+ip6t+` -t $t -N KUBE-KUBELET-CANARY; done
`+ip6t+` -t mangle -N KUBE-IPTABLES-HINT
`+ipt+` -t filter -N CNI-TEST; `+ipt+` -t filter -A FORWARD -j CNI-TEST; `+ipt+` -t filter -A CNI-TEST -s 10.99.0.0/16 -j ACCEPT
`+ip6t+` -t nat -N CNI-NAT-TEST; `+ip6t+` -t nat -A POSTROUTING -j CNI-NAT-TEST; `+ip6t+` -t nat -A CNI-NAT-TEST -s fd99::/64 -j MASQUERADE`)
}

// foreignSnapshot is what addForeign put outside the backend's reader's
// view (the nftables reader reads only kube-proxy's tables).
func foreignSnapshot(t *testing.T, b backend.Backend) string {
	t.Helper()
	if b == backend.NFTables {
		return nstest.Sh(t, "nft list table inet cni-test")
	}
	return ""
}

// snapshot is render live of one backend (a full read).
func snapshot(t *testing.T, b backend.Backend) string {
	t.Helper()
	rs, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return rules.Format(rs)
}

// restore puts a backend back to a snapshot: empty it, then load the
// snapshot with the backend's own loader.
func restore(t *testing.T, b backend.Backend, snap string) {
	t.Helper()
	if b == backend.NFTables {
		nstest.Sh(t, "for f in ip ip6; do nft list table $f kube-proxy >/dev/null 2>&1 && nft delete table $f kube-proxy; done; true")
	} else {
		ipt, ip6t := iptablesCmds(b)
		empty := `printf '*filter\nCOMMIT\n*nat\nCOMMIT\n*mangle\nCOMMIT\n' | `
		nstest.Sh(t, empty+strings.Replace(ipt, " -w", "-restore -w 5", 1)+"; "+empty+strings.Replace(ip6t, " -w", "-restore -w 5", 1))
	}
	parts, err := rules.SplitFamilies(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range bothFamilies {
		if strings.TrimSpace(parts[fam]) == "" {
			continue
		}
		load(t, b, fam, parts[fam])
	}
}

func load(t *testing.T, b backend.Backend, fam rules.Family, text string) {
	t.Helper()
	nstest.Feed(t, text, ruleload.Argv(b, fam)...)
}

// loadRendered loads this project's rendered footprint as the backend the
// node switched to: it is only the background here, the oracle's rules are
// what is judged.
func loadRendered(t *testing.T, b backend.Backend, kv rke2.KubeVersion) {
	t.Helper()
	expectedtest.Load(t, expected.Options{Backend: b, Kubernetes: kv, Services: 3, Families: bothFamilies})
}

// runVerify runs verify as the CLI does: a shallow read that skips the
// per-service chains.
func runVerify(t *testing.T, b backend.Backend, kv rke2.KubeVersion, fams []rules.Family) *verify.Result {
	return runVerifyWhy(t, b, kv, fams, "")
}

func runVerifyWhy(t *testing.T, b backend.Backend, kv rke2.KubeVersion, fams []rules.Family, why string) *verify.Result {
	t.Helper()
	r := verify.NewReader(hostfs.New("/"))
	res, err := verify.Run(context.Background(), verify.Options{Expect: b, ExpectSource: "--expect", Kubernetes: kv, Families: fams, SingleStackReason: why, Reader: r})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// hasFinding reports a finding of kind ("" any) about backend b and
// family fam ("" any).
func hasFinding(res *verify.Result, kind string, b backend.Backend, fam rules.Family) bool {
	return slices.ContainsFunc(res.Findings, func(f verify.Finding) bool {
		return (kind == "" || f.Kind == kind) && f.Backend == b && (fam == "" || f.Family == fam)
	})
}

func report(res *verify.Result) string {
	var b strings.Builder
	_ = verify.WriteText(&b, res)
	return b.String()
}

// withoutFamilyLines removes each of lines once from fam's part of a
// snapshot, failing when one is not there.
func withoutFamilyLines(t *testing.T, snap string, fam rules.Family, lines ...string) string {
	t.Helper()
	var out []string
	inFam := false
	left := slices.Clone(lines)
	for _, l := range strings.Split(snap, "\n") {
		if strings.HasPrefix(l, "# family ") {
			inFam = l == "# family "+string(fam)
		}
		if i := slices.Index(left, l); inFam && i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		out = append(out, l)
	}
	if len(left) > 0 {
		t.Errorf("expected %s lines not in the snapshot: %q", fam, left)
	}
	return strings.Join(out, "\n")
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... and %d more", len(out)-10))
	}
	return strings.Join(out, "\n")
}

// firstDiff shows the first differing line of two texts, with counts:
// whole snapshots of 2000 services are too long to print.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d (of %d / %d):\n- %s\n+ %s", i+1, len(al), len(bl), x, y)
		}
	}
	return "identical"
}
