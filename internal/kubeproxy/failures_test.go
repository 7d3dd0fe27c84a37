package kubeproxy

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// kube-proxy's real pages after a clean first sync have no failure series
// (a CounterVec writes none before its first Inc); the nftables page has
// the queued timestamp of the change the oracle queued last.
func TestNoFailuresOnRealPages(t *testing.T) {
	for _, file := range []string{realIptablesPage, realNftablesPage} {
		f, notes, err := ParseFigures(readPage(t, file))
		if err != nil || len(notes) != 0 {
			t.Fatal(err, notes)
		}
		if len(f.Failures) != 0 || len(f.Unreadable) != 0 {
			t.Errorf("%s: failures %v unreadable %v, want none", file, f.Failures, f.Unreadable)
		}
	}
	f, _, _ := ParseFigures(readPage(t, realNftablesPage))
	if len(f.LastQueued) != 2 || f.LastQueued["IPv4"] < 1.7e9 || f.LastQueued["IPv6"] < 1.7e9 {
		t.Errorf("last queued %v, want a Unix time per family", f.LastQueued)
	}
}

const failingPage = `# TYPE kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds gauge
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} 1.7960613e+09
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"} 1.7960614e+09
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.7960612e+09
kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"} 7
kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family="IPv4"} 1
kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv6"} 2
kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{ip_family="IPv6"} 1
kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPX"} 9
kubeproxy_sync_proxy_rules_nftables_sync_failures_total 9
`

func TestFailureSignals(t *testing.T) {
	f, notes, err := ParseFigures([]byte(failingPage))
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	want := []FailureCount{
		{FailIptablesPartialRestore, "IPv6", 1},
		{FailIptablesRestore, "IPv6", 2},
		{FailNFTablesCleanup, "IPv4", 1},
		{FailNFTablesSync, "IPv4", 7},
	}
	if !reflect.DeepEqual(f.Failures, want) {
		t.Errorf("failures %v, want %v (only IPv4 and IPv6 series)", f.Failures, want)
	}
	if n, ok := f.Failure(FailNFTablesSync, "IPv4"); n != 7 || !ok {
		t.Errorf("Failure(nftables_sync, IPv4) = %g, %v", n, ok)
	}
	if n, ok := f.Failure(FailNFTablesSync, "IPv6"); n != 0 || ok {
		t.Errorf("Failure(nftables_sync, IPv6) = %g, %v, want no series", n, ok)
	}
	if f.LastQueued["IPv6"] != 1.7960614e+09 || f.LastSync["IPv4"] != 1.7960612e+09 {
		t.Errorf("queued %v last %v", f.LastQueued, f.LastSync)
	}
	if got := FailureCounterName(FailNFTablesSync); got != "kubeproxy_sync_proxy_rules_nftables_sync_failures_total" {
		t.Errorf("FailureCounterName = %q", got)
	}
}

// A kube-proxy that has not synced yet (waiting for the API server) has
// only its queued timestamp: that is still kube-proxy's page.
func TestQueuedOnlyIsKubeProxy(t *testing.T) {
	f, _, err := ParseFigures([]byte("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family=\"IPv4\"} 1.79e+09\n"))
	if err != nil || f.LastQueued["IPv4"] != 1.79e9 {
		t.Fatalf("figures %+v, %v", f, err)
	}
}

// A failure signal that is not a number leaves its family open, with a
// note: it never reads as "no failures".
func TestUnreadableSignals(t *testing.T) {
	page := `kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv4"} NaN
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} +Inf
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"} -3
kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.79e+09
`
	f, notes, err := ParseFigures([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"IPv4": {kpIptablesRestoreFailures},
		"IPv6": {kpSyncLastQueuedTimestamp, kpSyncLastTimestamp},
	}
	if !reflect.DeepEqual(f.Unreadable, want) || len(f.Failures) != 0 {
		t.Errorf("unreadable %v failures %v, want %v and none", f.Unreadable, f.Failures, want)
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "cannot be told") {
		t.Errorf("notes %q, want one per unreadable signal", notes)
	}
}

// Whatever the page, every failure counter kube-proxy wrote for IPv4 or
// IPv6 comes out: as its count when it is a finite, non-negative number,
// else as unreadable for its family. None is ever dropped silently (which
// would read as no failures), and nothing else comes out.
func FuzzFailureSignals(f *testing.F) {
	f.Add([]byte(failingPage))
	f.Add([]byte("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"} NaN\n"))
	f.Add([]byte("kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family=\"IPv6\"} 1\nkubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family=\"IPv6\"} -Inf\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		fig, _, err := ParseFigures(page)
		if err != nil {
			return
		}
		// ParseFigures reads only kube-proxy's sync samples (lines of other
		// names are not parsed on).
		samples, err := ParseExposition(page, func(name string) bool { return strings.HasPrefix(name, "kubeproxy_sync_") })
		if err != nil {
			t.Fatalf("ParseFigures accepted a page ParseExposition refuses: %v", err)
		}
		// The last sample of a series wins, as in ParseFigures.
		last := map[[2]string]float64{}
		for _, s := range samples {
			short, ok := failureCounters[s.Name]
			fam := s.Labels["ip_family"]
			if ok && (fam == "IPv4" || fam == "IPv6") && plainLabel(s.Labels["table"]) {
				last[[2]string{short, fam}] = s.Value
			}
		}
		for k, v := range last {
			n, have := fig.Failure(k[0], k[1])
			bad := slices.Contains(fig.Unreadable[k[1]], FailureCounterName(k[0]))
			finite := !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
			switch {
			case finite && (!have || n != v) && !bad:
				t.Errorf("%s %s = %g read as %g (series %v)", k[0], k[1], v, n, have)
			case !finite && !bad:
				t.Errorf("%s %s = %g not marked unreadable (read as %g, series %v)", k[0], k[1], v, n, have)
			}
		}
		for _, c := range fig.Failures {
			if _, seen := last[[2]string{c.Counter, c.IPFamily}]; !seen || math.IsNaN(c.Count) || math.IsInf(c.Count, 0) || c.Count < 0 {
				t.Errorf("failure %+v is not on the page as a finite count", c)
			}
		}
		if !slices.IsSortedFunc(fig.Failures, func(a, b FailureCount) int {
			return strings.Compare(a.Counter+" "+a.IPFamily, b.Counter+" "+b.IPFamily)
		}) {
			t.Errorf("failures not sorted: %v", fig.Failures)
		}
	})
}
