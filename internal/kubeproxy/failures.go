package kubeproxy

import (
	"fmt"
	"sort"
)

// kube-proxy's own failure signals, exactly as
// k8s.io/kubernetes/pkg/proxy/metrics names them in 1.34 to 1.37: four
// counters per ip_family, each created at the first failure it counts (a
// CounterVec has no series for a label set it never incremented), and the
// time kube-proxy last queued a sync, to be read against
// kpSyncLastTimestamp, the time of its last successful one.
const (
	kpIptablesRestoreFailures        = "kubeproxy_sync_proxy_rules_iptables_restore_failures_total"
	kpIptablesPartialRestoreFailures = "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total"
	kpNFTablesSyncFailures           = "kubeproxy_sync_proxy_rules_nftables_sync_failures_total"
	kpNFTablesCleanupFailures        = "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total"
	kpSyncLastQueuedTimestamp        = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"
)

// The failure counters by the short name verify's findings and metrics use.
const (
	// FailIptablesRestore counts failed iptables-restore runs of a sync
	// (iptables and ipvs modes; iptables' cleanup at start counts here too).
	FailIptablesRestore = "iptables_restore"
	// FailIptablesPartialRestore counts failed partial syncs, which
	// kube-proxy retries as a full one: every failed partial restore counts
	// in FailIptablesRestore as well.
	FailIptablesPartialRestore = "iptables_partial_restore"
	// FailNFTablesSync counts failed `nft -f` transactions of a sync.
	FailNFTablesSync = "nftables_sync"
	// FailNFTablesCleanup counts failed deletions of stale chains; the sync
	// that follows still runs.
	FailNFTablesCleanup = "nftables_cleanup"
)

// failureCounters maps kube-proxy's counter names to the short names.
var failureCounters = map[string]string{
	kpIptablesRestoreFailures:        FailIptablesRestore,
	kpIptablesPartialRestoreFailures: FailIptablesPartialRestore,
	kpNFTablesSyncFailures:           FailNFTablesSync,
	kpNFTablesCleanupFailures:        FailNFTablesCleanup,
}

// FailureCounterName is kube-proxy's metric name of a short counter name.
func FailureCounterName(counter string) string {
	for name, short := range failureCounters {
		if short == counter {
			return name
		}
	}
	return counter
}

// FailureCount is one of kube-proxy's failure counters for one IP family.
type FailureCount struct {
	Counter  string  `json:"counter"`
	IPFamily string  `json:"ip_family"`
	Count    float64 `json:"count"`
}

// Failure returns the count of counter for family, and whether kube-proxy
// has a series for it (it has none before the first failure: count 0).
func (f *Figures) Failure(counter, family string) (float64, bool) {
	for _, c := range f.Failures {
		if c.Counter == counter && c.IPFamily == family {
			return c.Count, true
		}
	}
	return 0, false
}

// signal says whether name is one of the samples verify judges kube-proxy's
// syncs by: a value of it that is not a finite, non-negative number must
// leave that family's judgement open, never read as "no failures".
func signal(name string) bool {
	_, counter := failureCounters[name]
	return counter || name == kpSyncLastTimestamp || name == kpSyncLastQueuedTimestamp
}

// signalReader collects the failure signals while ParseFigures walks the
// samples; finish puts them into Figures in a stable order.
type signalReader struct {
	failures   map[[2]string]float64 // {counter, family}
	unreadable map[string]map[string]bool
}

// bad records a signal sample whose value cannot be judged.
func (r *signalReader) bad(name, family string) {
	if r.unreadable == nil {
		r.unreadable = map[string]map[string]bool{}
	}
	if r.unreadable[family] == nil {
		r.unreadable[family] = map[string]bool{}
	}
	r.unreadable[family][name] = true
}

func (r *signalReader) failure(name, family string, v float64) {
	if r.failures == nil {
		r.failures = map[[2]string]float64{}
	}
	r.failures[[2]string{failureCounters[name], family}] = v
}

// finish fills f and returns a note per unreadable signal.
func (r *signalReader) finish(f *Figures) []string {
	for k, v := range r.failures {
		f.Failures = append(f.Failures, FailureCount{Counter: k[0], IPFamily: k[1], Count: v})
	}
	sort.Slice(f.Failures, func(i, j int) bool {
		a, b := f.Failures[i], f.Failures[j]
		if a.Counter != b.Counter {
			return a.Counter < b.Counter
		}
		return a.IPFamily < b.IPFamily
	})
	var notes []string
	for fam, names := range r.unreadable {
		if f.Unreadable == nil {
			f.Unreadable = map[string][]string{}
		}
		for name := range names {
			f.Unreadable[fam] = append(f.Unreadable[fam], name)
		}
		sort.Strings(f.Unreadable[fam])
		for _, name := range f.Unreadable[fam] {
			notes = append(notes, fmt.Sprintf("%s{ip_family=%q} is not a finite, non-negative number: left out, so whether kube-proxy's %s syncs fail cannot be told from its metrics",
				name, fam, fam))
		}
	}
	return notes
}
