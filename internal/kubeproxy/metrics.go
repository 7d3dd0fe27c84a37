package kubeproxy

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// MetricsMaxBody bounds kube-proxy's /metrics page. A real page is
// about 70 KiB (with Go runtime and client metrics); a larger answer is not
// one this package reads.
const MetricsMaxBody = 4 << 20

// The kube-proxy metric names verify reads, exactly as
// k8s.io/kubernetes/pkg/proxy/metrics exports them in 1.34 to 1.37. The
// full and partial histograms exist only in the iptables and nftables
// modes; kube-proxy exports no count of Services or endpoints, only the
// cumulative change counters and, in iptables mode, the rules it owns.
const (
	kpSyncDuration        = "kubeproxy_sync_proxy_rules_duration_seconds"
	kpSyncFullDuration    = "kubeproxy_sync_full_proxy_rules_duration_seconds"
	kpSyncPartialDuration = "kubeproxy_sync_partial_proxy_rules_duration_seconds"
	kpSyncLastTimestamp   = "kubeproxy_sync_proxy_rules_last_timestamp_seconds"
	kpServiceChanges      = "kubeproxy_sync_proxy_rules_service_changes_total"
	kpEndpointChanges     = "kubeproxy_sync_proxy_rules_endpoint_changes_total"
	kpIptablesRules       = "kubeproxy_sync_proxy_rules_iptables_total"
)

// Sync kinds, as the histogram they come from.
const (
	SyncAll     = "all"     // kubeproxy_sync_proxy_rules_duration_seconds
	SyncFull    = "full"    // kubeproxy_sync_full_proxy_rules_duration_seconds
	SyncPartial = "partial" // kubeproxy_sync_partial_proxy_rules_duration_seconds
)

var kpHistograms = map[string]string{kpSyncDuration: SyncAll, kpSyncFullDuration: SyncFull, kpSyncPartialDuration: SyncPartial}

// Figures is what kube-proxy's own /metrics said about its rule
// syncs since it started.
type Figures struct {
	// Syncs has one entry per histogram kind and IP family that counted at
	// least one sync, sorted by kind then family.
	Syncs []SyncFigures `json:"syncs,omitempty"`
	// LastSync is kubeproxy_sync_proxy_rules_last_timestamp_seconds per IP
	// family: Unix time of the last successful sync.
	LastSync map[string]float64 `json:"last_sync_timestamp_seconds,omitempty"`
	// ServiceChanges and EndpointChanges are kube-proxy's cumulative change
	// counters (every family's proxier counts each Service).
	ServiceChanges  float64 `json:"service_changes_total"`
	EndpointChanges float64 `json:"endpoint_changes_total"`
	// IptablesRules is kubeproxy_sync_proxy_rules_iptables_total per
	// "family/table" (iptables mode only).
	IptablesRules map[string]float64 `json:"iptables_rules,omitempty"`
	// LastQueued is kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds
	// per IP family: Unix time kube-proxy last queued a sync (a Service or
	// endpoint change, or its start). Later than LastSync, a change still
	// waits for a successful sync.
	LastQueued map[string]float64 `json:"last_queued_timestamp_seconds,omitempty"`
	// Failures are kube-proxy's sync failure counters per counter and IP
	// family, sorted; only those kube-proxy has a series for, which it
	// creates at the first failure, so an absent one counted none.
	Failures []FailureCount `json:"sync_failures,omitempty"`
	// Unreadable names, per IP family, the failure counters and sync
	// timestamps whose value was not a finite, non-negative number: that
	// family's syncs cannot be judged, which is not the same as "no
	// failures".
	Unreadable map[string][]string `json:"unreadable_signals,omitempty"`
}

// SyncFigures summarises one sync-duration histogram of one IP family.
type SyncFigures struct {
	Kind     string  `json:"kind"`
	IPFamily string  `json:"ip_family"`
	Count    float64 `json:"count"`
	Mean     float64 `json:"mean_seconds"`
	// P99 is estimated from the buckets as Prometheus' histogram_quantile
	// does: linear within the bucket holding the 99th percentile. It is
	// absent when the buckets cannot give one (a bound that is not a
	// number, counts that fall as the bound rises, an estimate that is not
	// finite): verify says so in a note rather than guess.
	P99 *float64 `json:"p99_seconds,omitempty"`
}

// Bounds on what verify copies from kube-proxy's page into status.json and
// its textfile. kube-proxy 1.34-1.37 writes two IP families and, in
// iptables mode, the filter and nat tables per family: a page with more is
// not one whose every series is worth a fleet's time series.
const (
	// maxIptablesRuleSeries bounds kubeproxy_sync_proxy_rules_iptables_total
	// series copied (family/table pairs); the rest are dropped with a note.
	maxIptablesRuleSeries = 10
	// maxHistogramBuckets bounds the buckets kept per histogram; kube-proxy
	// writes 16 (ExponentialBuckets(0.001, 2, 15) and +Inf).
	maxHistogramBuckets = 64
)

// metricsURL is kube-proxy's /metrics on the host and port of its
// /proxyMode URL, which CheckProxyModeURL has held to loopback.
func metricsURL(proxyModeURL string) (string, error) {
	if err := CheckProxyModeURL(proxyModeURL); err != nil {
		return "", err
	}
	u, _ := url.Parse(proxyModeURL)
	u.Path = "/metrics"
	return u.String(), nil
}

// MetricsTimeout bounds the /metrics request, connect to last byte.
const MetricsTimeout = 5 * time.Second

// ReadFigures fetches kube-proxy's /metrics beside proxyModeURL (same host
// and port, so on this node) with Client's bounds and MetricsTimeout, and
// parses it with ParseFigures. notes say what ParseFigures left out; an
// error says why there are no figures.
func ReadFigures(ctx context.Context, proxyModeURL string) (*Figures, []string, error) {
	client := Client(MetricsTimeout)
	target, err := metricsURL(proxyModeURL)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s unreachable: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s answered %s", target, resp.Status)
	}
	page, err := io.ReadAll(io.LimitReader(resp.Body, MetricsMaxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the answer: %w", target, err)
	}
	if len(page) > MetricsMaxBody {
		return nil, nil, fmt.Errorf("%s answered more than %d bytes, more than kube-proxy's metrics", target, MetricsMaxBody)
	}
	f, notes, err := ParseFigures(page)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", target, err)
	}
	for i := range notes {
		notes[i] = "kube-proxy's /metrics at " + target + ": " + notes[i]
	}
	return f, notes, nil
}

// ParseFigures extracts the figures from a /metrics page. A page with
// none of kube-proxy's sync metrics is an error: whatever answered is not
// a kube-proxy that has synced or tried to (one that has not synced yet
// has only its queued timestamp). Every figure it returns is finite and
// every copied series bounded (see maxIptablesRuleSeries); what it had to
// leave out is in notes, one line each.
func ParseFigures(page []byte) (*Figures, []string, error) {
	samples, err := ParseExposition(page, func(name string) bool {
		return strings.HasPrefix(name, "kubeproxy_sync_")
	})
	if err != nil {
		return nil, nil, fmt.Errorf("not a Prometheus text exposition: %w", err)
	}
	type key struct{ kind, family string }
	type hist struct {
		sum, count float64
		buckets    map[float64]float64
		// bad says why the buckets cannot give a quantile.
		bad string
	}
	hists := map[key]*hist{}
	get := func(k key) *hist {
		if hists[k] == nil {
			hists[k] = &hist{buckets: map[float64]float64{}}
		}
		return hists[k]
	}
	f := &Figures{}
	var notes []string
	var signals signalReader
	found := false
	droppedRules := 0
	for _, s := range samples {
		fam := s.Labels["ip_family"]
		perFamily := s.Name != kpServiceChanges && s.Name != kpEndpointChanges
		if perFamily && (fam != "IPv4" && fam != "IPv6" || !plainLabel(s.Labels["table"])) {
			// The per-family samples carry kube-proxy's ip_family (and
			// table); anything else would only end up in our own labels.
			continue
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) || s.Value < 0 {
			// kube-proxy's sync figures are finite and not negative; a
			// non-finite one could not even be stored in status.json. A
			// failure signal left out must not read as none.
			if signal(s.Name) {
				signals.bad(s.Name, fam)
				found = true
			}
			continue
		}
		if _, ok := failureCounters[s.Name]; ok {
			signals.failure(s.Name, fam, s.Value)
			found = true
			continue
		}
		if base, suffix, ok := histogramPart(s.Name); ok {
			h := get(key{kpHistograms[base], fam})
			switch suffix {
			case "_sum":
				h.sum = s.Value
			case "_count":
				h.count = s.Value
			case "_bucket":
				le, err := parseExpositionFloat(s.Labels["le"])
				switch {
				case err != nil:
					return nil, nil, fmt.Errorf("%s bucket le=%q: %w", base, s.Labels["le"], err)
				case math.IsNaN(le) || le < 0:
					// A duration is never negative: no bucket of
					// kube-proxy's has a bound below 0.
					h.bad = fmt.Sprintf("a bucket with le=%q", s.Labels["le"])
				case len(h.buckets) >= maxHistogramBuckets:
					h.bad = fmt.Sprintf("more than %d buckets", maxHistogramBuckets)
				default:
					h.buckets[le] = s.Value
				}
			}
			found = true
			continue
		}
		switch s.Name {
		case kpSyncLastTimestamp:
			if f.LastSync == nil {
				f.LastSync = map[string]float64{}
			}
			f.LastSync[fam] = s.Value
			found = true
		case kpSyncLastQueuedTimestamp:
			if f.LastQueued == nil {
				f.LastQueued = map[string]float64{}
			}
			f.LastQueued[fam] = s.Value
			found = true
		case kpServiceChanges:
			f.ServiceChanges = s.Value
		case kpEndpointChanges:
			f.EndpointChanges = s.Value
		case kpIptablesRules:
			k := fam + "/" + s.Labels["table"]
			if _, seen := f.IptablesRules[k]; !seen && len(f.IptablesRules) >= maxIptablesRuleSeries {
				droppedRules++
				continue
			}
			if f.IptablesRules == nil {
				f.IptablesRules = map[string]float64{}
			}
			f.IptablesRules[k] = s.Value
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("no %s, %s or %s: not kube-proxy's metrics", kpSyncDuration, kpSyncLastTimestamp, kpSyncLastQueuedTimestamp)
	}
	notes = append(notes, signals.finish(f)...)
	if droppedRules > 0 {
		notes = append(notes, fmt.Sprintf("%d %s series beyond the first %d family/table pairs dropped (kube-proxy writes at most 4)",
			droppedRules, kpIptablesRules, maxIptablesRuleSeries))
	}
	for k, h := range hists {
		if h.count <= 0 {
			continue
		}
		what := fmt.Sprintf("%s %s sync histogram", k.family, k.kind)
		mean := h.sum / h.count
		if math.IsInf(mean, 0) || math.IsNaN(mean) {
			notes = append(notes, fmt.Sprintf("%s left out: its mean (sum %g / count %g) is not a finite number", what, h.sum, h.count))
			continue
		}
		sf := SyncFigures{Kind: k.kind, IPFamily: k.family, Count: h.count, Mean: mean}
		if h.bad == "" {
			h.bad = monotonic(h.buckets)
		}
		if h.bad == "" {
			if p99 := bucketQuantile(0.99, h.buckets); !math.IsInf(p99, 0) && !math.IsNaN(p99) {
				sf.P99 = &p99
			} else {
				h.bad = "buckets whose p99 estimate is not a finite number"
			}
		}
		if h.bad != "" {
			notes = append(notes, fmt.Sprintf("%s: p99 left out: it has %s", what, h.bad))
		}
		f.Syncs = append(f.Syncs, sf)
	}
	sort.Strings(notes)
	sort.Slice(f.Syncs, func(i, j int) bool {
		a, b := f.Syncs[i], f.Syncs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.IPFamily < b.IPFamily
	})
	return f, notes, nil
}

// monotonic says what is wrong with cumulative buckets whose count falls
// as the bound rises ("" when none does): no quantile can be read from them.
func monotonic(buckets map[float64]float64) string {
	bounds := make([]float64, 0, len(buckets))
	for le := range buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	for i := 1; i < len(bounds); i++ {
		if buckets[bounds[i]] < buckets[bounds[i-1]] {
			return fmt.Sprintf("cumulative counts that fall from %g (le=%g) to %g (le=%g)",
				buckets[bounds[i-1]], bounds[i-1], buckets[bounds[i]], bounds[i])
		}
	}
	return ""
}

// histogramPart splits a Sample name of one of kpHistograms into the
// histogram and its _sum, _count or _bucket suffix.
func histogramPart(name string) (base, suffix string, ok bool) {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		if _, known := kpHistograms[base]; found && known {
			return base, suffix, true
		}
	}
	return "", "", false
}

// bucketQuantile estimates quantile q from cumulative buckets (upper bound
// to count) as histogram_quantile does: find the bucket where the rank
// falls and interpolate linearly within it (from 0 for the first). A rank
// in the +Inf bucket gives the highest finite bound; no buckets give 0.
// The interpolation is a weighted mean of the two bounds, never their
// difference, so bounds of opposite sign near the float range (le=-1e308
// and le=1.7e308) do not overflow; the caller still rejects a result that
// is not finite.
func bucketQuantile(q float64, buckets map[float64]float64) float64 {
	bounds := make([]float64, 0, len(buckets))
	for le := range buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0
	}
	total := buckets[bounds[len(bounds)-1]]
	if total <= 0 {
		return 0
	}
	rank := q * total
	prevBound, prevCount := 0.0, 0.0
	for _, le := range bounds {
		c := buckets[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return prevBound
			}
			if c == prevCount || prevCount == 0 && le <= 0 {
				// As histogram_quantile: a first bucket bounded at or
				// below 0 has no width to interpolate in.
				return le
			}
			w := (rank - prevCount) / (c - prevCount)
			return prevBound*(1-w) + le*w
		}
		prevBound, prevCount = le, c
	}
	return prevBound
}

// plainLabel holds a label value verify copies into its own metrics to
// what kube-proxy writes there (table names), so no escaping is needed.
func plainLabel(v string) bool {
	if len(v) > 32 {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
