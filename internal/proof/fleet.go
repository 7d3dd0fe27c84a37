package proof

import (
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// FleetMetricsFile is watch's textfile of what a fleet aggregates beside
// verify's judgement: how each node decided, what on it fights kube-proxy,
// what each backend costs there and when its rules were last proven. Its
// own file, since it is read from the host (plan, facts, bench record) and
// not from the drift tracker, and no series of it is in the other two.
const FleetMetricsFile = "rke2_proxy_backend_fleet.prom"

// Fleet is one node's fleet view.
type Fleet struct {
	// Decision is the decision RKE2 was given this boot ("" Backend: none
	// applied, or the tool is off).
	Decision plan.Decision
	// Planned is set when this boot has a plan, whether or not it was
	// applied; Applied when RKE2 was given a backend of ours.
	Planned, Applied bool
	// Conflicts are hostconflict's findings for the planned backend.
	Conflicts []hostconflict.Finding
	// Cost is bench's record (nil: never measured).
	Cost *facts.Cost
	// LastProof is when a verify last found the rules right (zero: not
	// since watch started).
	LastProof time.Time
	// Heartbeat is the Node condition's lastHeartbeatTime as watch last
	// wrote it (zero: not since watch started), StaleAfter how long it
	// stands (the Node's stale-after annotation).
	Heartbeat  time.Time
	StaleAfter time.Duration
}

// Fleet is s's fleet view: its plan, and a probe of the host (its
// firewall and network managers, for the conflicts; kind is the node's
// distribution, whose config and data-dir the probe reads).
func (s State) Fleet(kind distro.Kind, lastProof time.Time) Fleet {
	fl := Fleet{LastProof: lastProof}
	if s.planErr == nil {
		fl.Planned, fl.Applied = true, s.plan.AppliedBackend() != ""
		fl.Decision = appliedDecision(s.plan)
	}
	f := facts.Probe(s.Root, facts.Options{HostServices: true, Distribution: kind})
	fl.Conflicts = hostconflict.Find(f, fl.Decision.Backend)
	fl.Cost = f.Cost
	return fl
}

// appliedDecision is the decision behind what RKE2 was given: the plan's
// own when it was carried out; for an earlier run's drop-in that this run
// could not replace, only its backend and modes (the source that decided
// it is not known); none when nothing was applied.
func appliedDecision(p plan.Plan) plan.Decision {
	a := p.Applied
	switch {
	case p.Carried():
		return p.Decision
	case a.Backend != "":
		return plan.Decision{Backend: a.Backend, ProxyMode: a.ProxyMode, IptablesMode: a.Backend.IptablesMode(), Source: "unknown"}
	}
	return plan.Decision{Disabled: p.Decision.Disabled}
}

// FleetMetrics renders fl in the Prometheus text format.
func FleetMetrics(fl Fleet) []byte {
	var b strings.Builder
	if d := fl.Decision; d.Backend != "" && plain(d.ProxyMode) && plain(d.IptablesMode) && plain(d.Source) {
		gauge(&b, "rke2_proxy_backend_decision_info", "This boot's plan: backend, kube-proxy's proxy mode and IPTABLES_MODE, and which setting decided (auto, config, env, cmdline, rke2-config) (1 always).")
		fmt.Fprintf(&b, "rke2_proxy_backend_decision_info{backend=%q,iptables_mode=%q,proxy_mode=%q,source=%q} 1\n", d.Backend, d.IptablesMode, d.ProxyMode, d.Source)
	}
	if fl.Planned && !fl.Decision.Disabled {
		gauge(&b, "rke2_proxy_backend_plan_applied", "1 when apply gave RKE2 a backend this boot, 0 when its plan was not applied (no backend can run, on_failure: block, the operator's own drop-in): rke2-proxy-backend detect and journalctl -u rke2-server say why.")
		fmt.Fprintf(&b, "rke2_proxy_backend_plan_applied %d\n", one(fl.Applied))
	}
	gauge(&b, "rke2_proxy_backend_host_conflicts", "Host services or settings that fight kube-proxy or the CNI (firewalld, ufw, nm-cloud-setup, ...; rke2-proxy-backend detect names each fix).")
	fmt.Fprintf(&b, "rke2_proxy_backend_host_conflicts %d\n", len(fl.Conflicts))
	if len(fl.Conflicts) > 0 {
		gauge(&b, "rke2_proxy_backend_host_conflict", "1 for each kind of host conflict found (id as detect -o json names it).")
		seen := map[string]bool{}
		for _, c := range fl.Conflicts {
			if plain(c.ID) && !seen[c.ID] {
				seen[c.ID] = true
				fmt.Fprintf(&b, "rke2_proxy_backend_host_conflict{id=%q} 1\n", c.ID)
			}
		}
	}
	benchMetrics(&b, fl.Cost)
	if !fl.LastProof.IsZero() {
		gauge(&b, "rke2_proxy_backend_last_proof_timestamp_seconds", "Unix time a verify last found kube-proxy's rules right (since the watch service started).")
		fmt.Fprintf(&b, "rke2_proxy_backend_last_proof_timestamp_seconds %d\n", fl.LastProof.Unix())
	}
	if !fl.Heartbeat.IsZero() {
		gauge(&b, "rke2_proxy_backend_node_condition_heartbeat_timestamp_seconds", "Unix time of the lastHeartbeatTime watch last wrote on the Node condition RKE2ProxyBackendProblem.")
		fmt.Fprintf(&b, "rke2_proxy_backend_node_condition_heartbeat_timestamp_seconds %d\n", fl.Heartbeat.Unix())
		gauge(&b, "rke2_proxy_backend_node_condition_stale_after_seconds", "How long the Node condition stands after its heartbeat (the rke2-proxy-backend/stale-after annotation): older, kubectl proxy-backend calls it Unknown.")
		fmt.Fprintf(&b, "rke2_proxy_backend_node_condition_stale_after_seconds %g\n", fl.StaleAfter.Seconds())
	}
	return []byte(b.String())
}

// benchMetrics writes bench's last figures per backend and step, and
// whether they still describe the node.
func benchMetrics(b *strings.Builder, c *facts.Cost) {
	if c == nil {
		return
	}
	gauge(b, "rke2_proxy_backend_bench_services", "Services of the cluster size rke2-proxy-backend bench last measured.")
	fmt.Fprintf(b, "rke2_proxy_backend_bench_services %d\n", c.Services)
	gauge(b, "rke2_proxy_backend_bench_stale", "1 when the bench figures no longer describe the node (another kernel or loader since): run bench again.")
	fmt.Fprintf(b, "rke2_proxy_backend_bench_stale %d\n", one(c.Stale != ""))
	if at, err := time.Parse(time.RFC3339, c.MeasuredAt); err == nil {
		gauge(b, "rke2_proxy_backend_bench_timestamp_seconds", "Unix time of the last bench run.")
		fmt.Fprintf(b, "rke2_proxy_backend_bench_timestamp_seconds %d\n", at.Unix())
	}
	for _, m := range []struct {
		name, help string
		v          func(bench.Step) float64
	}{
		{"rke2_proxy_backend_bench_wall_seconds", "Wall time of one rule load of bench's size, per backend and step (full: every rule, partial: one Service's).", func(s bench.Step) float64 { return s.WallSeconds }},
		{"rke2_proxy_backend_bench_cpu_seconds", "CPU time (user and system) of the loaders for one rule load of bench's size, per backend and step.", func(s bench.Step) float64 { return s.UserSeconds + s.SysSeconds }},
	} {
		gauge(b, m.name, m.help)
		for _, r := range c.Results {
			for _, s := range r.Steps {
				if s.Step == bench.StepFull || s.Step == bench.StepPartial {
					fmt.Fprintf(b, "%s{backend=%q,step=%q} %g\n", m.name, r.Backend, s.Step, m.v(s))
				}
			}
		}
	}
}

// plain keeps a label value read from a host file to the words our
// records hold (lower-case letters, digits, '-', '.'), which need no
// escaping; anything else is left out rather than quoted wrong.
func plain(v string) bool {
	if v == "" || len(v) > 32 {
		return false
	}
	return strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789-.") == ""
}

// WriteFleetMetrics writes the textfile of what fleet returns into dir
// (see writeTextfile); fleet (a probe of the host) is not asked when
// node_exporter is not set up.
func WriteFleetMetrics(root hostfs.Root, dir string, fleet func() Fleet) error {
	_, err := writeTextfile(root, dir, FleetMetricsFile, func() []byte { return FleetMetrics(fleet()) })
	return err
}
