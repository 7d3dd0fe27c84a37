package verify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
)

// group is the writers that share kube-proxy's backend on this node and
// where each one's rules belong. On RKE2 it is kube-proxy alone: the CNIs
// run in pods with their own iptables choice and verify's CNI check judges
// them. On k3s flannel and kube-router's network policy controller run in
// the k3s process and exec the same iptables as kube-proxy (the first on
// k3s's PATH: k3s-root's bin/aux links, or the host's), so their chains
// move with kube-proxy's and a copy left in another backend is stranded
// like kube-proxy's own.
type group struct {
	kind    distro.Kind
	members ownership.Group
	expect  backend.Backend
	// units are the distribution's installed units, for the fix texts.
	units []string
}

// newGroup is opts' group: ownership.GroupFor the distribution and what
// k3s runs (opts.K3s; nil: k3s's defaults, both run).
func newGroup(opts Options) group {
	n := opts.K3s
	return group{kind: opts.Distribution, expect: opts.Expect, units: opts.Units,
		members: ownership.GroupFor(opts.Distribution, n == nil || n.Flannel, n == nil || n.NetworkPolicy)}
}

// embedded reports whether kube-proxy, kubelet and the group's other
// writers run inside the distribution's process (k3s), on its PATH
// iptables: then they move together and restart with its unit.
func (g group) embedded() bool { return g.kind.Profile().KubeProxyEmbedded }

// has reports whether the CNI component o is one of the group.
func (g group) has(o cni.Owner) bool { return g.members.Has(ownership.Owner(o)) }

// home is where member m's rules belong (ownership.Home).
func (g group) home(m ownership.Owner) backend.Backend { return ownership.Home(m, g.expect) }

// strays are the members whose rules in b are out of place (never empty
// for a backend other than g.expect: kube-proxy is one).
func (g group) strays(b backend.Backend) ownership.Group { return g.members.StraysIn(b, g.expect) }

// names lists members as an operator knows them.
func (g group) names(members ownership.Group) string {
	var out []string
	for _, m := range members {
		if m == ownership.KubeProxy {
			out = append(out, "kube-proxy")
			continue
		}
		out = append(out, cniOwnerNames[cni.Owner(m)])
	}
	return strings.Join(out, ", ")
}

// restart is the command that restarts the distribution's service: the
// installed units where they are found by name (k3s's vary), else the
// profile's.
func (g group) restart() string {
	if p := g.kind.Profile(); p.Units != nil || len(g.units) == 0 {
		return p.Restart
	}
	return "systemctl restart " + strings.Join(g.units, " ")
}

// restartKubeProxy fixes a missing skeleton: kube-proxy rebuilds its
// chains and jumps on its first full sync after a restart.
func (g group) restartKubeProxy() string {
	return "restart kube-proxy so it rebuilds its rules: " + g.restart()
}

// kubeProxyLogs is where kube-proxy logs: its static pod's log files, or
// the journal of the unit whose process it runs inside.
func (g group) kubeProxyLogs() string {
	if g.embedded() {
		return g.kind.Name() + "'s journal, journalctl -u " + strings.TrimSuffix(g.unit(), ".service")
	}
	return "/var/log/pods/kube-system_kube-proxy-*/kube-proxy/*.log"
}

// syncFailureFix is where an operator learns which command fails.
func (g group) syncFailureFix() string {
	return "read kube-proxy's log for the failing command (" + g.kubeProxyLogs() + "), " +
		"run rke2-proxy-backend detect to see whether this node can run the backend, then restart " + g.kind.Name() + " (" + g.restart() + ")"
}

// k3sFix moves the group from the backend it left: apply, k3s's
// ExecStartPre, resets the bin/aux links a first start made stick, so
// after a restart the whole group writes again in its backend; the old
// chains stay until cleanup removes them.
func (g group) k3sFix(from backend.Backend) string {
	return fmt.Sprintf("kube-proxy, flannel and kube-router write with the first iptables on k3s's PATH (k3s-root's bin/aux links, with prefer-bundled-bin), and an earlier start left it on %s: restart k3s (%s) so its ExecStartPre rke2-proxy-backend apply resets the links and all three write again where the plan (%s) wants them, or run rke2-proxy-backend switch --to %s; then remove the old chains with %s",
		from, g.restart(), g.expect, g.expect, CleanupCommand(from))
}

// unit is the k3s unit a fix names: the one installed, else install.sh's
// server unit.
func (g group) unit() string {
	if len(g.units) == 1 {
		return g.units[0]
	}
	return string(g.kind.Profile().Kind)
}
