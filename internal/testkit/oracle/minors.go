package oracle

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Minors are the Kubernetes minors the oracle is built for, which are the
// minors verify knows (expected.KnownMinors). Adding one: run
// test/kubeproxy/genmod.sh for its newest patch, `go mod tidy
// -modfile=go.<minor>.mod` there (with the minor's toolchain, see specs),
// add it here and to specs, then fix what the tests that use the oracle
// report.
var Minors = []string{"v1.34", "v1.35", "v1.36", "v1.37", "v1.38"}

// spec says how one minor's oracle is built and what it can program.
type spec struct {
	// tags select the proxier constructor adapter in test/kubeproxy.
	tags []string
	// toolchain is the GOTOOLCHAIN the minor's module needs when its go.mod
	// asks for a newer Go than the project's ("" builds with the project's
	// go command as it is configured). The go command fetches that
	// toolchain through the module proxy the first time.
	toolchain string
	// nftablesOnly, when set, says why this minor's oracle has only the
	// nftables proxier: no iptables backend and no kubelet chains.
	nftablesOnly string
}

var specs = map[string]spec{
	// 1.37 passes the KubeProxyConfiguration to the proxier constructors.
	"v1.37": {tags: []string{"kubeproxy_config_constructors"}},
	// 1.38 needs Go 1.27 and sigs.k8s.io/iptables-wrappers v1.0.0, which
	// the module proxy does not serve: go.v1.38.mod replaces it by an empty
	// stub (test/kubeproxy/iptables-wrappers-stub), which leaves the
	// nftables proxier, the one part that imports none of it.
	"v1.38": {
		tags:         []string{"kubeproxy_config_constructors", "kubeproxy_nftables_only"},
		toolchain:    "go1.27.3",
		nftablesOnly: "Kubernetes 1.38's iptables proxier and kubelet's iptables calls import sigs.k8s.io/iptables-wrappers v1.0.0, which the Go module proxy does not serve: they wait for that module",
	},
}

// Lacks says why minor's oracle has no proxier for backend b, or "" when
// it has one. A test looping over Minors × backends logs it for the cells
// it leaves out and runs the rest: such a cell is not applicable by
// construction, so it is no skip (CI's strict mode fails skips).
func Lacks(minor string, b backend.Backend) string {
	if why := specs[minor].nftablesOnly; why != "" && b != backend.NFTables {
		return fmt.Sprintf("no %s oracle for %s: %s", b, minor, why)
	}
	return ""
}

// NewestWith is the newest minor whose oracle has backend b's proxier
// (1.38's has only nftables': a test of the iptables proxier takes 1.37).
func NewestWith(b backend.Backend) string {
	for i := len(Minors) - 1; i > 0; i-- {
		if Lacks(Minors[i], b) == "" {
			return Minors[i]
		}
	}
	return Minors[0]
}

// LacksKubelet says why minor's oracle cannot write kubelet's startup
// chains (Options.Kubelet), or "" when it can.
func LacksKubelet(minor string) string {
	if why := specs[minor].nftablesOnly; why != "" {
		return fmt.Sprintf("no kubelet chains from the %s oracle: %s", minor, why)
	}
	return ""
}

// LacksIPVS says why ipvs mode cannot run on backend b, or "": kube-proxy's
// ipvs proxier programs iptables, so it pairs with an iptables backend
// (which minors have one is Lacks's business).
func LacksIPVS(b backend.Backend) string {
	if !b.UsesIptables() {
		return "no ipvs mode on the nftables backend: kube-proxy's ipvs proxier writes iptables rules"
	}
	return ""
}

// Fit is o for minor's oracle and backend b: ok false when the oracle has
// no proxier for b, otherwise o without kubelet's chains when it cannot
// write them; notes say what was left out, for the test's log.
func Fit(minor string, b backend.Backend, o Options) (fit Options, notes []string, ok bool) {
	if why := Lacks(minor, b); why != "" {
		return o, []string{why}, false
	}
	if why := LacksIPVS(b); o.IPVS && why != "" {
		return o, []string{why}, false
	}
	if why := LacksKubelet(minor); o.Kubelet && why != "" {
		o.Kubelet = false
		notes = append(notes, why)
	}
	return o, notes, true
}
