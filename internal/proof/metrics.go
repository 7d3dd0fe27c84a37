package proof

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// The textfiles node_exporter picks up from its directory: verify's and,
// apart (every verify run rewrites verify's, so neither writer clobbers
// the other's series), watch's drift state; FleetMetricsFile is the third.
const (
	MetricsFile      = "rke2_proxy_backend.prom"
	DriftMetricsFile = "rke2_proxy_backend_watch.prom"
)

// Metrics renders the Prometheus text exposition of r. now is the run's
// end, the only timestamp the tool writes anywhere.
func Metrics(r *verify.Result, now time.Time) []byte {
	var b strings.Builder
	BuildInfo(&b, "verify")
	gauge(&b, "rke2_proxy_backend_info", "Backend kube-proxy is expected to use on this node.")
	fmt.Fprintf(&b, "rke2_proxy_backend_info{backend=%q} 1\n", r.Expect)
	gauge(&b, "rke2_proxy_backend_proxy_mode_info", "kube-proxy's proxy mode (iptables, nftables, ipvs) verify judged the expected backend in, beside the backend (1 always).")
	fmt.Fprintf(&b, "rke2_proxy_backend_proxy_mode_info{backend=%q,mode=%q} 1\n", r.Expect, r.Mode)
	gauge(&b, "rke2_proxy_backend_verify_ok", "1 when kube-proxy's rules are complete in the expected backend and none are stranded elsewhere.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_ok %d\n", one(r.OK))
	gauge(&b, "rke2_proxy_backend_verify_cannot_tell", "1 when verify could not tell: the expected backend could not be read.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_cannot_tell %d\n", one(r.Verdict == verify.VerdictUnknown))
	gauge(&b, "rke2_proxy_backend_verify_findings", "Number of findings of the last verify run.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_findings %d\n", len(r.Findings))
	gauge(&b, "rke2_proxy_backend_stranded_rules", "kube-proxy rules found in a backend kube-proxy does not use.")
	for _, name := range backend.All {
		fmt.Fprintf(&b, "rke2_proxy_backend_stranded_rules{backend=%q} %d\n", name, stranded(r, name, false))
	}
	gauge(&b, "rke2_proxy_backend_stranded_chains", "kube-proxy chains found in a backend kube-proxy does not use.")
	for _, name := range backend.All {
		fmt.Fprintf(&b, "rke2_proxy_backend_stranded_chains{backend=%q} %d\n", name, stranded(r, name, true))
	}
	gauge(&b, "rke2_proxy_backend_cni_rules", "Chains holding a CNI component's rules, per backend (only components found).")
	cniSeries(&b, r, "rke2_proxy_backend_cni_rules", func(st verify.BackendState) map[cni.Owner]int { return st.CNIChains })
	gauge(&b, "rke2_proxy_backend_cni_other_backend_chains", "Chains of a CNI component in a backend other than the one matching kube-proxy's.")
	cniSeries(&b, r, "rke2_proxy_backend_cni_other_backend_chains", func(st verify.BackendState) map[cni.Owner]int { return st.CNIOtherBackend })
	kubeProxyMetrics(&b, r)
	k138Metric(&b, Readiness138Of(r))
	gauge(&b, "rke2_proxy_backend_verify_duration_seconds", "Wall time of the last verify run, including the wait for kube-proxy.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_duration_seconds %g\n", r.Duration.Seconds())
	gauge(&b, "rke2_proxy_backend_verify_last_run_timestamp_seconds", "Unix time the last verify run finished.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_last_run_timestamp_seconds %d\n", now.Unix())
	return []byte(b.String())
}

// BuildInfoHelp is the HELP of rke2_proxy_backend_build_info, the same in
// verify's and watch's textfiles (node_exporter refuses one metric with
// two HELP texts).
const BuildInfoHelp = "Version of rke2-proxy-backend that wrote this textfile; writer is verify or watch (1 always)."

// BuildInfo writes rke2_proxy_backend_build_info for writer. The writer
// label keeps verify's and watch's series apart (node_exporter refuses
// the same series from two files), and says which of them still runs an
// old binary after a package upgrade.
func BuildInfo(b *strings.Builder, writer string) {
	gauge(b, "rke2_proxy_backend_build_info", BuildInfoHelp)
	fmt.Fprintf(b, "rke2_proxy_backend_build_info{version=%q,writer=%q} 1\n", labelValue(version.Version), writer)
}

// one is a condition as a gauge's value.
func one(cond bool) int {
	if cond {
		return 1
	}
	return 0
}

// gauge writes the HELP and TYPE lines of gauge name.
func gauge(b *strings.Builder, name, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
}

// optLabel is labelValue for a value that may be absent ("").
func optLabel(v string) string {
	if v == "" {
		return ""
	}
	return labelValue(v)
}

// labelValue keeps a label value to what needs no escaping beyond %q's
// (which matches the exposition format for printable ASCII without
// backslashes); a version string is that, anything else becomes "unknown".
func labelValue(v string) string {
	if v == "" || len(v) > 64 {
		return "unknown"
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return "unknown"
		}
	}
	return v
}

// cniSeries writes one sample per backend and component with chains, in
// a stable order.
func cniSeries(b *strings.Builder, r *verify.Result, name string, counts func(verify.BackendState) map[cni.Owner]int) {
	for _, st := range r.Backends {
		m := counts(st)
		for _, o := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(b, "%s{backend=%q,cni=%q} %d\n", name, st.Backend, o, m[o])
		}
	}
}

// kubeProxyMetrics writes kube-proxy's own sync figures, labelled with the
// backend it should use, so the fleet compares nodes by backend. Nothing is
// written when verify could not read them.
func kubeProxyMetrics(b *strings.Builder, r *verify.Result) {
	kp := r.KubeProxy
	if kp == nil {
		return
	}
	if len(kp.Syncs) > 0 {
		gauge(b, "rke2_proxy_backend_kube_proxy_sync_seconds", "kube-proxy's rule sync duration from its own histograms (kind all, full or partial): mean, and p99 estimated from the buckets.")
		for _, s := range kp.Syncs {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_seconds{backend=%q,ip_family=%q,kind=%q,stat=\"mean\"} %g\n", r.Expect, s.IPFamily, s.Kind, s.Mean)
			if s.P99 != nil {
				fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_seconds{backend=%q,ip_family=%q,kind=%q,stat=\"p99\"} %g\n", r.Expect, s.IPFamily, s.Kind, *s.P99)
			}
		}
		gauge(b, "rke2_proxy_backend_kube_proxy_syncs", "Rule syncs kube-proxy counted in each histogram since it started.")
		for _, s := range kp.Syncs {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_syncs{backend=%q,ip_family=%q,kind=%q} %g\n", r.Expect, s.IPFamily, s.Kind, s.Count)
		}
	}
	if len(kp.LastSync) > 0 {
		gauge(b, "rke2_proxy_backend_kube_proxy_last_sync_timestamp_seconds", "Unix time of kube-proxy's last successful rule sync, as it reports it.")
		for _, fam := range slices.Sorted(maps.Keys(kp.LastSync)) {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_last_sync_timestamp_seconds{backend=%q,ip_family=%q} %g\n", r.Expect, fam, kp.LastSync[fam])
		}
	}
	gauge(b, "rke2_proxy_backend_kube_proxy_service_changes", "kube-proxy's cumulative Service changes (kubeproxy_sync_proxy_rules_service_changes_total; each IP family's proxier counts each Service).")
	fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_service_changes{backend=%q} %g\n", r.Expect, kp.ServiceChanges)
	gauge(b, "rke2_proxy_backend_kube_proxy_endpoint_changes", "kube-proxy's cumulative endpoint changes (kubeproxy_sync_proxy_rules_endpoint_changes_total).")
	fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_endpoint_changes{backend=%q} %g\n", r.Expect, kp.EndpointChanges)
	if len(kp.LastQueued) > 0 {
		gauge(b, "rke2_proxy_backend_kube_proxy_last_queued_timestamp_seconds", "Unix time kube-proxy last queued a rule sync (kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds); later than its last successful sync, a change waits.")
		for _, fam := range slices.Sorted(maps.Keys(kp.LastQueued)) {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_last_queued_timestamp_seconds{backend=%q,ip_family=%q} %g\n", r.Expect, fam, kp.LastQueued[fam])
		}
	}
	if len(kp.Failures) > 0 {
		gauge(b, "rke2_proxy_backend_kube_proxy_sync_failures", "kube-proxy's sync failure counters as verify last read them (kubeproxy_sync_proxy_rules_<counter>_failures_total), only those it has counted.")
		for _, c := range kp.Failures {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_failures{backend=%q,counter=%q,ip_family=%q} %g\n", r.Expect, c.Counter, c.IPFamily, c.Count)
		}
	}
	if v, ok := syncFailing(r); ok {
		gauge(b, "rke2_proxy_backend_kube_proxy_sync_failing", "1 when kube-proxy's failure counters rose between two reads or a change it queued waited too long for a sync; absent when verify could not tell.")
		fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_failing{backend=%q} %d\n", r.Expect, v)
	}
	if len(kp.IptablesRules) > 0 {
		gauge(b, "rke2_proxy_backend_kube_proxy_iptables_rules", "iptables rules kube-proxy owns per IP family and table (kubeproxy_sync_proxy_rules_iptables_total; iptables mode only).")
		for _, k := range slices.Sorted(maps.Keys(kp.IptablesRules)) {
			fam, table, _ := strings.Cut(k, "/")
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_iptables_rules{backend=%q,ip_family=%q,table=%q} %g\n", r.Expect, fam, table, kp.IptablesRules[k])
		}
	}
}

func stranded(r *verify.Result, b backend.Backend, chains bool) int {
	for _, st := range r.Backends {
		if st.Backend == b && !st.Expected {
			if chains {
				return st.KubeProxyChains
			}
			return st.KubeProxyRules
		}
	}
	return 0
}

// syncFailing says what the metric of kube-proxy's failure signals shows:
// 1 when r has a finding from them, 0 when it has none and every signal was
// read, and ok false when verify cannot tell (figures not read, or a
// signal not a number): never a 0 that reads as fine.
func syncFailing(r *verify.Result) (v int, ok bool) {
	for _, f := range r.Findings {
		if f.Kind == verify.KindSyncFailing || f.Kind == verify.KindSyncStale {
			return 1, true
		}
	}
	if r.KubeProxy == nil || len(r.KubeProxy.Unreadable) > 0 {
		return 0, false
	}
	return 0, true
}

// WriteMetrics writes r's textfile atomically into dir (a host path under
// root). When dir does not exist node_exporter is not set up to read it:
// nothing is written and note says so.
func WriteMetrics(root hostfs.Root, dir string, r *verify.Result, now time.Time) (note string, err error) {
	note, err = writeTextfile(root, dir, MetricsFile, func() []byte { return Metrics(r, now) })
	if note != "" {
		note = "metrics not written: " + note
	}
	return note, err
}

// DriftMetrics renders watch's drift series in the Prometheus text format;
// while drifting, the last writer of the change before it is one info
// series (its comm and unit or pod: a bounded label set, pid and container
// left to status.json).
func DriftMetrics(drifting bool, transitions int, writer *events.Writer) []byte {
	var b strings.Builder
	BuildInfo(&b, "watch")
	gauge(&b, "rke2_proxy_backend_drift", "1 while kube-proxy's rules have been wrong for longer than the watch grace period.")
	fmt.Fprintf(&b, "rke2_proxy_backend_drift %d\n", one(drifting))
	b.WriteString("# HELP rke2_proxy_backend_drift_transitions_total Drift starts and recoveries seen since the watch service started.\n")
	b.WriteString("# TYPE rke2_proxy_backend_drift_transitions_total counter\n")
	fmt.Fprintf(&b, "rke2_proxy_backend_drift_transitions_total %d\n", transitions)
	if drifting && writer != nil {
		gauge(&b, "rke2_proxy_backend_drift_writer_info", "The last process whose nf_tables commit came before the drift, while drifting (its systemd unit or pod; none when it had exited).")
		fmt.Fprintf(&b, "rke2_proxy_backend_drift_writer_info{comm=%q,unit=%q,pod_uid=%q} 1\n", labelValue(writer.Comm), optLabel(writer.Unit), optLabel(writer.PodUID))
	}
	return []byte(b.String())
}

// WriteDriftMetrics writes the drift textfile into dir (see writeTextfile).
func WriteDriftMetrics(root hostfs.Root, dir string, drifting bool, transitions int, writer *events.Writer) error {
	_, err := writeTextfile(root, dir, DriftMetricsFile, func() []byte { return DriftMetrics(drifting, transitions, writer) })
	return err
}

// writeTextfile writes one textfile atomically into dir (a host path
// under root); data is not asked when nothing is written. A directory
// that is unset or missing means node_exporter is not set up to read it:
// nothing is written and note says why. A file that cannot be written is
// removed, so the fleet never reads an older run's values as this one's.
func writeTextfile(root hostfs.Root, dir, name string, data func() []byte) (note string, err error) {
	if dir == "" {
		return "no textfile directory configured", nil
	}
	fi, err := root.Stat(dir)
	if err != nil || !fi.IsDir() {
		if err != nil && !isNotExist(err) {
			return "", fmt.Errorf("textfile directory %s: %w", root.Path(dir), err)
		}
		return fmt.Sprintf("textfile directory %s does not exist (set verify.textfile_dir or --textfile-dir)", dir), nil
	}
	file := path.Join(dir, name)
	if _, err := root.WriteFileAtomic(file, data(), 0o644); err != nil {
		return "", errors.Join(fmt.Errorf("write %s: %w", root.Path(file), err), root.RemoveFile(file))
	}
	return "", nil
}
