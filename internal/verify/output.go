package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// MetricsFile is the textfile node_exporter picks up from its directory.
const MetricsFile = "rke2_proxy_backend.prom"

// StatusSchema versions status.json (and verify -o json): raise it when a
// key is removed, renamed or changes type. Readers refuse a schema they do
// not know rather than misread it.
const StatusSchema = 1

// MaxStatusSize bounds status.json: check reads no more, so verify never
// writes more (a larger result is written as an invalid record instead).
// A real one is a few KiB (one entry per backend and per finding, bounded
// figures).
const MaxStatusSize = 1 << 20

// VerdictInvalid is the verdict of the record a verify run leaves when it
// could not write its result: whatever status.json said before is no
// longer true of this node, and check must say it cannot tell.
const VerdictInvalid = "invalid"

// JSON is the result as printed with -o json and stored in hostfs.StatusFile.
func JSON(r *Result) ([]byte, error) {
	r.Schema = StatusSchema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode verify result: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteStatus stores r atomically at hostfs.StatusFile under root. A run
// that cannot store its result never leaves the previous one in place:
// it writes an invalid record (Invalidate) instead and returns the error.
func WriteStatus(root hostfs.Root, r *Result) error {
	b, err := JSON(r)
	if err == nil && len(b) > MaxStatusSize {
		err = fmt.Errorf("verify result is %d bytes, over the %d check reads", len(b), MaxStatusSize)
	}
	if err == nil {
		if _, err = root.WriteFileAtomic(hostfs.StatusFile, b, 0o644); err == nil {
			return nil
		}
		err = fmt.Errorf("write status %s: %w", root.Path(hostfs.StatusFile), err)
	}
	if ierr := Invalidate(root, err.Error()); ierr != nil {
		return errors.Join(err, ierr)
	}
	return fmt.Errorf("%w (status.json now says the result is invalid)", err)
}

// invalidRecord is status.json after a run that could not write its result.
type invalidRecord struct {
	Schema  int    `json:"schema"`
	OK      bool   `json:"ok"`
	Verdict string `json:"verdict"`
	Invalid string `json:"invalid"`
}

// ErrStatusStands is in the error of a run that could neither store its
// result nor invalidate the previous one: status.json still shows an
// older run's. The run's mark (BeginRun) is then left for check to find.
var ErrStatusStands = errors.New("status.json still shows an earlier run's result")

// Invalidate replaces status.json with a record saying why the last run's
// result is missing. When even that cannot be written (a full disk), the
// old status is removed: no status is "cannot tell" too, never the old OK.
// When neither works, the error wraps ErrStatusStands.
func Invalidate(root hostfs.Root, why string) error {
	b, _ := json.Marshal(invalidRecord{Schema: StatusSchema, Verdict: VerdictInvalid, Invalid: clip(why, 512)})
	_, werr := root.WriteFileAtomic(hostfs.StatusFile, append(b, '\n'), 0o644)
	if werr == nil {
		return nil
	}
	p, err := root.ResolveEntry(hostfs.StatusFile)
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("cannot invalidate %s: writing failed (%v) and removing failed (%w): %w", root.Path(hostfs.StatusFile), werr, err, ErrStatusStands)
	}
	return nil
}

// StoreRun is one verify run's mark on hostfs.VerifyPending, from before it
// judges until its result (or its invalid record) is stored: a run killed
// on the way, or one that could change nothing, leaves the mark without
// its lock, and check says it cannot tell instead of trusting status.json.
type StoreRun struct {
	p     *hostfs.Pending
	root  hostfs.Root
	files []string // the files the run writes, whose stale temps go
}

// BeginRun marks a run in progress that writes status.json and files
// (the metrics, the node-feature file). A mark that cannot be made (the
// directory is read-only or out of inodes) is returned as an error for
// the caller to warn about; the run goes on and stores its result as
// usual, and the StoreRun is still valid (it marks nothing).
func BeginRun(root hostfs.Root, files ...string) (*StoreRun, error) {
	p, err := root.BeginPending(hostfs.VerifyPending)
	return &StoreRun{p: p, root: root, files: append([]string{hostfs.StatusFile}, files...)}, err
}

// End closes the run given what storing its result returned: the mark goes
// unless the store left an earlier result standing (ErrStatusStands). The
// last run to end removes the temp files killed runs left beside the files
// verify writes (no other run is under way then to own one).
func (r *StoreRun) End(storeErr error) error {
	if r == nil || r.p == nil {
		return nil
	}
	p := r.p
	r.p = nil
	if errors.Is(storeErr, ErrStatusStands) {
		p.Close()
		return nil
	}
	return p.Done(func() error {
		var errs []error
		for _, f := range r.files {
			_, err := r.root.RemoveStaleTemps(f)
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// Publish writes one run's textfile metrics (into textfileDir, when set)
// and its status. Metrics that cannot be written are removed, so the
// textfile never shows an older run's values; the status is written
// whatever happened to the metrics, with a note when they were not.
func Publish(root hostfs.Root, textfileDir string, r *Result, now time.Time) error {
	note, merr := WriteMetrics(root, textfileDir, r, now)
	if merr != nil {
		if rerr := removeMetrics(root, textfileDir); rerr != nil {
			merr = errors.Join(merr, rerr)
		}
		note = "metrics not written: " + merr.Error()
	}
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	return errors.Join(merr, WriteStatus(root, r))
}

func removeMetrics(root hostfs.Root, dir string) error {
	p, err := root.ResolveEntry(path.Join(dir, MetricsFile))
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("remove the previous metrics %s: %w", root.Path(path.Join(dir, MetricsFile)), err)
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
	BuildInfo(&b, "verify")
	gauge("rke2_proxy_backend_info", "Backend kube-proxy is expected to use on this node.")
	fmt.Fprintf(&b, "rke2_proxy_backend_info{backend=%q} 1\n", r.Expect)
	gauge("rke2_proxy_backend_proxy_mode_info", "kube-proxy's proxy mode (iptables, nftables, ipvs) verify judged the expected backend in, beside the backend (1 always).")
	fmt.Fprintf(&b, "rke2_proxy_backend_proxy_mode_info{backend=%q,mode=%q} 1\n", r.Expect, r.Mode)
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

// BuildInfoHelp is the HELP of rke2_proxy_backend_build_info, the same in
// verify's and watch's textfiles (node_exporter refuses one metric with
// two HELP texts).
const BuildInfoHelp = "Version of rke2-proxy-backend that wrote this textfile; writer is verify or watch (1 always)."

// BuildInfo writes rke2_proxy_backend_build_info for writer. The writer
// label keeps verify's and watch's series apart (node_exporter refuses
// the same series from two files), and says which of them still runs an
// old binary after a package upgrade.
func BuildInfo(b *strings.Builder, writer string) {
	fmt.Fprintf(b, "# HELP rke2_proxy_backend_build_info %s\n# TYPE rke2_proxy_backend_build_info gauge\n", BuildInfoHelp)
	fmt.Fprintf(b, "rke2_proxy_backend_build_info{version=%q,writer=%q} 1\n", labelValue(version.Version), writer)
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
	if len(kp.LastQueued) > 0 {
		gauge("rke2_proxy_backend_kube_proxy_last_queued_timestamp_seconds", "Unix time kube-proxy last queued a rule sync (kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds); later than its last successful sync, a change waits.")
		for _, fam := range sortedKeys(kp.LastQueued) {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_last_queued_timestamp_seconds{backend=%q,ip_family=%q} %g\n", r.Expect, fam, kp.LastQueued[fam])
		}
	}
	if len(kp.Failures) > 0 {
		gauge("rke2_proxy_backend_kube_proxy_sync_failures", "kube-proxy's sync failure counters as verify last read them (kubeproxy_sync_proxy_rules_<counter>_failures_total), only those it has counted.")
		for _, c := range kp.Failures {
			fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_failures{backend=%q,counter=%q,ip_family=%q} %g\n", r.Expect, c.Counter, c.IPFamily, c.Count)
		}
	}
	if v, ok := SyncFailing(r); ok {
		gauge("rke2_proxy_backend_kube_proxy_sync_failing", "1 when kube-proxy's failure counters rose between two reads or a change it queued waited too long for a sync; absent when verify could not tell.")
		fmt.Fprintf(b, "rke2_proxy_backend_kube_proxy_sync_failing{backend=%q} %d\n", r.Expect, v)
	}
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

// clip shortens s to n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
