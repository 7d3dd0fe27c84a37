package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// deleteRule removes the rules of an nftables chain whose text contains
// match, by handle, the way an operator (or a buggy tool) would.
func deleteRule(family, chain, match string) step {
	return sh("nft -a list chain " + family + " kube-proxy " + chain + " | grep -F '" + match + "' | sed 's/.*# handle //' | " +
		"while read h; do nft delete rule " + family + " kube-proxy " + chain + " handle $h; done; " +
		"! nft list chain " + family + " kube-proxy " + chain + " | grep -qF '" + match + "'")
}

func rendered(b backend.Backend, kv rke2.KubeVersion, fams ...rules.Family) step {
	return func(t *testing.T, _ string) {
		expectedtest.Load(t, expected.Options{Backend: b, Kubernetes: kv, Services: 5, Families: fams})
	}
}

// TestServiceDispatchInNetns: with every base-chain jump in place, a
// services chain without its vmap dispatch DNATs nothing; verify must say
// so in every layout, with and without the Kubernetes version.
func TestServiceDispatchInNetns(t *testing.T) {
	both := []rules.Family{rules.IPv4, rules.IPv6}
	cases := []struct {
		name  string
		kube  rke2.KubeVersion
		steps []step
		want  string
	}{
		{"1.34 service-ips gone", minor(34), []step{rendered(backend.NFTables, minor(34), both...), deleteRule("ip", "services", "vmap @service-ips")}, "missing-dispatch@nftables"},
		{"1.36 service-ips gone", minor(36), []step{rendered(backend.NFTables, minor(36), both...), deleteRule("ip6", "services", "vmap @service-ips")}, "missing-dispatch@nftables"},
		{"1.36 service-nodeports gone", minor(36), []step{rendered(backend.NFTables, minor(36), both...), deleteRule("ip", "services", "vmap @service-nodeports")}, "missing-dispatch@nftables"},
		{"version unknown, service-ips gone", rke2.KubeVersion{}, []step{rendered(backend.NFTables, minor(36), both...), deleteRule("ip", "services", "vmap @service-ips")}, "missing-dispatch@nftables"},
		{"newer minor, service-ips gone", minor(39), []step{rendered(backend.NFTables, minor(36), both...), deleteRule("ip", "services", "vmap @service-ips")}, "missing-dispatch@nftables"},
		{"1.36 healthy", minor(36), []step{rendered(backend.NFTables, minor(36), both...)}, ""},
		{"1.36 healthy, version unknown", rke2.KubeVersion{}, []step{rendered(backend.NFTables, minor(36), both...)}, ""},
		{"1.34 healthy, version unknown", rke2.KubeVersion{}, []step{rendered(backend.NFTables, minor(34), both...)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			nstest.Tool(t, "nft")
			for _, s := range c.steps {
				s(t, "")
			}
			res := run(t, Options{Expect: backend.NFTables, Kubernetes: c.kube, Reader: shallowReader()})
			if got := kinds(res); got != c.want {
				t.Errorf("findings %q, want %q\n%s", got, c.want, report(res))
			}
			if c.want != "" && !strings.Contains(report(res), "Service dispatch: services has no rule with \"vmap @service-") {
				t.Errorf("the finding does not name the missing dispatch:\n%s", report(res))
			}
		})
	}
}

// TestNewerMinorInNetns: a minor newer than every known one is judged by
// the invariants only, and verify says so; a layout change it cannot know
// (here: 1.34's mark-for-masquerade chain gone, a chain no 1.36+ layout
// has either) never fails it.
func TestNewerMinorInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	// No services: nothing jumps to mark-for-masquerade, so it can go.
	expectedtest.Load(t, expected.Options{Backend: backend.NFTables, Kubernetes: minor(34), Families: []rules.Family{rules.IPv4, rules.IPv6}})
	nstest.Sh(t, "nft delete chain ip kube-proxy mark-for-masquerade; nft delete chain ip6 kube-proxy mark-for-masquerade")
	res := run(t, Options{Expect: backend.NFTables, Kubernetes: minor(39), Reader: shallowReader()})
	if !res.OK || !strings.Contains(strings.Join(res.Notes, "\n"), "v1.39 is newer than every minor this verify knows") {
		t.Errorf("newer minor: ok=%v notes %q\n%s", res.OK, res.Notes, report(res))
	}
	// The same node judged as 1.34 lacks a chain 1.34 writes.
	if res := run(t, Options{Expect: backend.NFTables, Kubernetes: minor(34), Reader: shallowReader()}); res.OK {
		t.Errorf("1.34 without mark-for-masquerade passed")
	}
}

// TestIPv6DisabledInNetns: with net.ipv6.conf.all.disable_ipv6=1 kube-proxy
// runs single-stack, so a node with only the IPv4 table passes; with IPv6
// usable, the same node misses its IPv6 table.
func TestIPv6DisabledInNetns(t *testing.T) {
	for _, disabled := range []bool{true, false} {
		name := map[bool]string{true: "ipv6 disabled", false: "ipv6 enabled"}[disabled]
		t.Run(name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			nstest.Tool(t, "nft")
			if disabled {
				nstest.Sh(t, "sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
			}
			fams, why, err := facts.IPFamilies(hostfs.New("/"))
			if err != nil {
				t.Fatal(err)
			}
			rendered(backend.NFTables, minor(36), rules.IPv4)(t, "")
			res := run(t, Options{Expect: backend.NFTables, Kubernetes: minor(36), Families: fams, SingleStackReason: why, Reader: shallowReader()})
			want := map[bool]string{true: "", false: "missing-table@nftables"}[disabled]
			if got := kinds(res); got != want {
				t.Errorf("families %v: findings %q, want %q\n%s", fams, got, want, report(res))
			}
			if disabled && !strings.Contains(strings.Join(res.Notes, "\n"), "disable_ipv6 is 1") {
				t.Errorf("single-stack verdict without saying why: %q", res.Notes)
			}
		})
	}
}

func shallowReader() netfilter.Reader {
	r := NewReader(hostfs.New("/"))
	return r
}

func report(res *Result) string {
	var b strings.Builder
	_ = WriteText(&b, res)
	return b.String()
}
