package verify

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// loadExpected renders kube-proxy's expected footprint and loads it.
func loadExpected(t *testing.T, b backend.Backend, services int, fams ...rules.Family) {
	t.Helper()
	expectedtest.Load(t, expected.Options{Backend: b, Services: services, Families: fams})
}

// Node setups, each a step a real node goes through.
type step func(t *testing.T, ref string)

// simulated replays kubelet's and kube-proxy's startup with the upstream
// IPv4 dump (see the dumps' README) and loads the rendered IPv6 skeleton,
// since kube-proxy programs both families and the dumps are IPv4 only.
func simulated(b backend.Backend) step {
	return func(t *testing.T, ref string) {
		nstest.Tool(t, "nfacct")
		nstest.Sh(t, "sh "+filepath.Join(ref, "derived/simulate-startup.sh")+" "+b.IptablesMode()+" 2>&1")
		loadExpected(t, b, 0, rules.IPv6)
	}
}

// nftablesNode loads the upstream nftables dump (IPv4, six services) and
// the rendered IPv6 table.
func nftablesNode(withIPv6 bool) step {
	return func(t *testing.T, ref string) {
		nstest.Sh(t, "nft -f "+filepath.Join(ref, "derived/nftables-overall-v4.reordered.nft"))
		if withIPv6 {
			loadExpected(t, backend.NFTables, 0, rules.IPv6)
		}
	}
}

func sh(script string) step {
	return func(t *testing.T, _ string) { nstest.Sh(t, script) }
}

// legacyKubeProxyOnly loads kube-proxy's own restore payload into legacy,
// without kubelet's chains: what a switch away from legacy leaves.
var legacyKubeProxyOnly = func(t *testing.T, ref string) {
	nstest.Tool(t, "nfacct")
	nstest.Sh(t, "for a in ct_state_invalid_dropped_pkts localhost_nps_accepted_pkts; do nfacct get $a >/dev/null 2>&1 || nfacct add $a; done; "+
		"iptables-legacy-restore -w 5 --noflush < "+filepath.Join(ref, "iptables-overall-v4.restore"))
}

func TestVerdictsInNetns(t *testing.T) {
	cases := []struct {
		name   string
		expect backend.Backend
		steps  []step
		want   string
	}{
		{"clean iptables-legacy", backend.IptablesLegacy, []step{simulated(backend.IptablesLegacy)}, ""},
		{"clean iptables-nft", backend.IptablesNFT, []step{simulated(backend.IptablesNFT)}, ""},
		{"clean iptables-nft with an empty legacy table from a probe", backend.IptablesNFT,
			[]step{simulated(backend.IptablesNFT), sh("iptables-legacy -w -t nat -L -n >/dev/null")}, ""},
		{"clean nftables", backend.NFTables, []step{nftablesNode(true)}, ""},
		{"nftables without the ip6 table", backend.NFTables, []step{nftablesNode(false)}, "missing-table@nftables"},
		{"rules stranded in legacy", backend.IptablesNFT,
			[]step{simulated(backend.IptablesNFT), legacyKubeProxyOnly}, "stranded-rules@iptables-legacy"},
		{"legacy node switched to nft", backend.IptablesNFT,
			[]step{simulated(backend.IptablesLegacy), simulated(backend.IptablesNFT)}, "stranded-rules@iptables-legacy,kubelet-hint@iptables-legacy"},
		{"missing base-chain jump", backend.IptablesLegacy,
			[]step{simulated(backend.IptablesLegacy), sh(`iptables-legacy -w -t nat -D POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING`)},
			"missing-jump@iptables-legacy"},
		{"flushed nat table", backend.IptablesNFT,
			[]step{simulated(backend.IptablesNFT), sh("iptables-nft -w -t nat -F; iptables-nft -w -t nat -X")},
			"missing-chain@iptables-nft,missing-jump@iptables-nft"},
		{"nftables next to iptables leftovers", backend.NFTables,
			[]step{nftablesNode(true), simulated(backend.IptablesNFT)}, "stranded-rules@iptables-nft"},
		{"nftables next to legacy leftovers", backend.NFTables,
			[]step{nftablesNode(true), simulated(backend.IptablesLegacy)}, "stranded-rules@iptables-legacy,kubelet-hint@iptables-legacy"},
		{"kubelet hint in the other backend", backend.IptablesLegacy,
			[]step{simulated(backend.IptablesLegacy), sh("iptables-nft -w -t mangle -N KUBE-IPTABLES-HINT; iptables-nft -w -t mangle -N KUBE-KUBELET-CANARY")},
			"kubelet-hint@iptables-nft"},
		{"iptables-nft rules while nftables expected, nothing in nftables", backend.NFTables,
			[]step{simulated(backend.IptablesNFT)}, "missing-table@nftables,missing-table@nftables,stranded-rules@iptables-nft"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := nstest.RefDir(t)
			if !nstest.InNetns(t) {
				return
			}
			for _, s := range c.steps {
				s(t, ref)
			}
			res := run(t, Options{Expect: c.expect, Reader: NewReader(hostfs.New("/"))})
			if got := kinds(res); got != c.want {
				var b strings.Builder
				WriteText(&b, res)
				t.Errorf("findings %q, want %q\n%s", got, c.want, b.String())
			}
		})
	}
}

// The rendered footprint loads with the backend's own tool and verifies
// clean, for every backend and both families, with services.
func TestRenderedLoadsAndVerifiesInNetns(t *testing.T) {
	cases := []struct {
		b    backend.Backend
		kube rke2.KubeVersion
	}{
		{backend.IptablesLegacy, rke2.KubeVersion{}},
		{backend.IptablesNFT, rke2.KubeVersion{}},
		{backend.NFTables, rke2.KubeVersion{}},
		{backend.NFTables, minor(33)},
		{backend.IptablesLegacy, minor(27)},
	}
	for _, c := range cases {
		name := string(c.b) + "@newest"
		if c.kube.Known() {
			name = string(c.b) + "@" + c.kube.String()
		}
		t.Run(name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			expectedtest.Load(t, expected.Options{Backend: c.b, Kubernetes: c.kube, Services: 25, Families: []rules.Family{rules.IPv4, rules.IPv6}})
			res := run(t, Options{Expect: c.b, Kubernetes: c.kube, Reader: NewReader(hostfs.New("/"))})
			if !res.OK {
				var out strings.Builder
				WriteText(&out, res)
				t.Errorf("verify after loading the render:\n%s", out.String())
			}
			if res.Backends[0].KubeProxyChains < 25 {
				t.Errorf("read %d kube-proxy chains, want the 25 services' and more", res.Backends[0].KubeProxyChains)
			}
		})
	}
}
