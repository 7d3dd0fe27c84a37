package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// MetricsFile is the textfile node_exporter picks up from its directory.
const MetricsFile = "rke2_proxy_backend.prom"

// JSON is the result as printed with -o json and stored in hostfs.StatusFile.
func JSON(r *Result) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode verify result: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteStatus stores r atomically at hostfs.StatusFile under root.
func WriteStatus(root hostfs.Root, r *Result) error {
	b, err := JSON(r)
	if err != nil {
		return err
	}
	if _, err := root.WriteFileAtomic(hostfs.StatusFile, b, 0o644); err != nil {
		return fmt.Errorf("write status %s: %w", root.Path(hostfs.StatusFile), err)
	}
	return nil
}

// Metrics renders the Prometheus text exposition of r. now is the run's
// end, the only timestamp the tool writes anywhere.
func Metrics(r *Result, now time.Time) []byte {
	var b strings.Builder
	gauge := func(name, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}
	gauge("rke2_proxy_backend_info", "Backend kube-proxy is expected to use on this node.")
	fmt.Fprintf(&b, "rke2_proxy_backend_info{backend=%q} 1\n", r.Expect)
	gauge("rke2_proxy_backend_verify_ok", "1 when kube-proxy's rules are complete in the expected backend and none are stranded elsewhere.")
	ok := 0
	if r.OK {
		ok = 1
	}
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_ok %d\n", ok)
	gauge("rke2_proxy_backend_verify_cannot_tell", "1 when verify could not tell: the expected backend could not be read.")
	unknown := 0
	if r.Verdict == VerdictUnknown {
		unknown = 1
	}
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_cannot_tell %d\n", unknown)
	gauge("rke2_proxy_backend_verify_findings", "Number of findings of the last verify run.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_findings %d\n", len(r.Findings))
	gauge("rke2_proxy_backend_stranded_rules", "kube-proxy rules found in a backend kube-proxy does not use.")
	for _, name := range backend.All {
		fmt.Fprintf(&b, "rke2_proxy_backend_stranded_rules{backend=%q} %d\n", name, stranded(r, name, false))
	}
	gauge("rke2_proxy_backend_stranded_chains", "kube-proxy chains found in a backend kube-proxy does not use.")
	for _, name := range backend.All {
		fmt.Fprintf(&b, "rke2_proxy_backend_stranded_chains{backend=%q} %d\n", name, stranded(r, name, true))
	}
	gauge("rke2_proxy_backend_cni_rules", "Chains holding a CNI component's rules, per backend (only components found).")
	cniSeries(&b, r, "rke2_proxy_backend_cni_rules", func(st BackendState) map[cni.Owner]int { return st.CNIChains })
	gauge("rke2_proxy_backend_cni_other_backend_chains", "Chains of a CNI component in a backend other than the one matching kube-proxy's.")
	cniSeries(&b, r, "rke2_proxy_backend_cni_other_backend_chains", func(st BackendState) map[cni.Owner]int { return st.CNIOtherBackend })
	kubeProxyMetrics(&b, r, gauge)
	gauge("rke2_proxy_backend_verify_duration_seconds", "Wall time of the last verify run, including the wait for kube-proxy.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_duration_seconds %g\n", r.Duration.Seconds())
	gauge("rke2_proxy_backend_verify_last_run_timestamp_seconds", "Unix time the last verify run finished.")
	fmt.Fprintf(&b, "rke2_proxy_backend_verify_last_run_timestamp_seconds %d\n", now.Unix())
	return []byte(b.String())
}

// cniSeries writes one sample per backend and component with chains, in
// a stable order.
func cniSeries(b *strings.Builder, r *Result, name string, counts func(BackendState) map[cni.Owner]int) {
	for _, st := range r.Backends {
		m := counts(st)
		owners := make([]string, 0, len(m))
		for o := range m {
			owners = append(owners, string(o))
		}
		sort.Strings(owners)
		for _, o := range owners {
			fmt.Fprintf(b, "%s{backend=%q,cni=%q} %d\n", name, st.Backend, o, m[cni.Owner(o)])
		}
	}
}

// kubeProxyMetrics writes kube-proxy's own sync figures, labelled with the
// backend it should use, so the fleet compares nodes by backend. Nothing is
// written when verify could not read them.
func kubeProxyMetrics(b *strings.Builder, r *Result, gauge func(name, help string)) {
	kp := r.KubeProxy
	if kp == nil {
		return
	}
	if len(kp.Syncs) > 0 {
		gauge("rke2_proxy_backend_kube_proxy_sync_seconds", "kube-proxy's rule sync duration from its own histograms (kind all, full or partial): mean, and p99 estimated from the buckets.")
		for _, s := range kp.Syncs {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_seconds{backend=%q,ip_family=%q,kind=%q,stat=\"mean\"} %g\n", r.Expect, s.IPFamily, s.Kind, s.Mean)
			if s.P99 != nil {
				fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_seconds{backend=%q,ip_family=%q,kind=%q,stat=\"p99\"} %g\n", r.Expect, s.IPFamily, s.Kind, *s.P99)
			}
		}
		gauge("rke2_proxy_backend_kube_proxy_syncs", "Rule syncs kube-proxy counted in each histogram since it started.")
		for _, s := range kp.Syncs {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_syncs{backend=%q,ip_family=%q,kind=%q} %g\n", r.Expect, s.IPFamily, s.Kind, s.Count)
		}
	}
	if len(kp.LastSync) > 0 {
		gauge("rke2_proxy_backend_kube_proxy_last_sync_timestamp_seconds", "Unix time of kube-proxy's last successful rule sync, as it reports it.")
		for _, fam := range sortedKeys(kp.LastSync) {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_last_sync_timestamp_seconds{backend=%q,ip_family=%q} %g\n", r.Expect, fam, kp.LastSync[fam])
		}
	}
	gauge("rke2_proxy_backend_kube_proxy_service_changes", "kube-proxy's cumulative Service changes (kubeproxy_sync_proxy_rules_service_changes_total; each IP family's proxier counts each Service).")
	fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_service_changes{backend=%q} %g\n", r.Expect, kp.ServiceChanges)
	gauge("rke2_proxy_backend_kube_proxy_endpoint_changes", "kube-proxy's cumulative endpoint changes (kubeproxy_sync_proxy_rules_endpoint_changes_total).")
	fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_endpoint_changes{backend=%q} %g\n", r.Expect, kp.EndpointChanges)
	if len(kp.IptablesRules) > 0 {
		gauge("rke2_proxy_backend_kube_proxy_iptables_rules", "iptables rules kube-proxy owns per IP family and table (kubeproxy_sync_proxy_rules_iptables_total; iptables mode only).")
		for _, k := range sortedKeys(kp.IptablesRules) {
			fam, table, _ := strings.Cut(k, "/")
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_iptables_rules{backend=%q,ip_family=%q,table=%q} %g\n", r.Expect, fam, table, kp.IptablesRules[k])
		}
	}
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func stranded(r *Result, b backend.Backend, chains bool) int {
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

// WriteMetrics writes the textfile atomically into dir (a host path under
// root). When dir does not exist node_exporter is not set up to read it:
// nothing is written and note says so.
func WriteMetrics(root hostfs.Root, dir string, r *Result, now time.Time) (note string, err error) {
	if dir == "" {
		return "metrics not written: no textfile directory configured", nil
	}
	fi, err := root.Stat(dir)
	if err != nil || !fi.IsDir() {
		if err != nil && !isNotExist(err) {
			return "", fmt.Errorf("textfile directory %s: %w", root.Path(dir), err)
		}
		return fmt.Sprintf("metrics not written: textfile directory %s does not exist (set verify.textfile_dir or --textfile-dir)", dir), nil
	}
	file := path.Join(dir, MetricsFile)
	if _, err := root.WriteFileAtomic(file, Metrics(r, now), 0o644); err != nil {
		return "", fmt.Errorf("write metrics %s: %w", root.Path(file), err)
	}
	return "", nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
