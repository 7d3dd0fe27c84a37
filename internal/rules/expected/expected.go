// Package expected models kube-proxy's footprint: the chains, jumps,
// canaries, tables, sets and maps kube-proxy (and kubelet) must have written
// for a proxy mode, backend, Kubernetes version and IP family.
//
// The footprint follows kube-proxy's sources (pkg/proxy/iptables/proxier.go
// iptablesJumpChains, pkg/proxy/nftables/proxier.go, pkg/kubelet/
// kubelet_network_linux.go) and the upstream expected-rule dumps; rule text
// is what iptables-save and nft print, so a rendered footprint loads with
// iptables-restore / nft -f and compares with a live read.
package expected

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Options select the footprint.
type Options struct {
	Backend    backend.Backend
	Kubernetes rke2.KubeVersion // zero: the newest layout we know
	Families   []rules.Family   // empty: both
	Services   int              // synthetic services to add
}

// MaxServices bounds --services: synthetic addresses come from fixed /16
// ranges (see services.go).
const MaxServices = 60000

// Render returns the expected ruleset: tables in family order (ipv4 first),
// base chains first in each table, then regular chains by name.
func Render(opts Options) (*rules.Ruleset, error) {
	if _, err := backend.Parse(string(opts.Backend)); err != nil {
		return nil, err
	}
	if opts.Services < 0 || opts.Services > MaxServices {
		return nil, fmt.Errorf("services %d: must be between 0 and %d", opts.Services, MaxServices)
	}
	kv := opts.Kubernetes
	if !kv.Known() {
		kv = Newest
	}
	if opts.Backend == backend.NFTables && !kv.AtLeast(1, 29) {
		return nil, fmt.Errorf("kubernetes v%d.%d: kube-proxy has no nftables mode before v1.29", kv.Major, kv.Minor)
	}
	families := opts.Families
	if len(families) == 0 {
		families = []rules.Family{rules.IPv4, rules.IPv6}
	}
	rs := &rules.Ruleset{Backend: opts.Backend}
	seen := map[rules.Family]bool{}
	for _, f := range families {
		if f != rules.IPv4 && f != rules.IPv6 {
			return nil, fmt.Errorf("family %q: valid families are ipv4, ipv6", f)
		}
		if seen[f] {
			return nil, fmt.Errorf("family %q given twice", f)
		}
		seen[f] = true
		if opts.Backend == backend.NFTables {
			t := nftablesTable(kv, f)
			addNFTablesServices(&t, f, opts.Services, kv.AtLeast(1, 36))
			rs.Tables = append(rs.Tables, t)
			continue
		}
		tables := iptablesTables(kv, f)
		addIptablesServices(tables, f, opts.Services)
		rs.Tables = append(rs.Tables, tables...)
	}
	return rs, nil
}
