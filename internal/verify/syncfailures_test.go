package verify

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
)

// t0 is the fake clock's start, as Unix seconds for kube-proxy's gauges.
var t0 = newFakeClock().Now()

func at(d time.Duration) float64 { return float64(t0.Add(d).UnixNano()) / 1e9 }

func TestStaleSyncs(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	cases := []struct {
		name string
		f    kubeproxy.Figures
		want string // families with a finding
	}{
		{"synced after the last queued change", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv4": at(time.Minute)}, LastSync: map[string]float64{"IPv4": at(time.Minute + time.Second)}}, ""},
		{"a change waiting 59s", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv4": at(9*time.Minute + time.Second)}, LastSync: map[string]float64{"IPv4": at(0)}}, ""},
		{"a change waiting 61s", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv4": at(9*time.Minute - time.Second), "IPv6": at(9 * time.Minute)},
			LastSync:   map[string]float64{"IPv4": at(0), "IPv6": at(9*time.Minute + time.Second)}}, "ipv4"},
		{"never synced since its start 5m ago", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv6": at(5 * time.Minute)}}, "ipv6"},
		// Syncs of 2m on average: a change queued during one waits for
		// the next, so 3m of waiting is not yet stale, 5m is.
		{"slow syncs, 3m", kubeproxy.Figures{Syncs: []kubeproxy.SyncFigures{{Kind: kubeproxy.SyncFull, IPFamily: "IPv4", Count: 3, Mean: 120}},
			LastQueued: map[string]float64{"IPv4": at(7 * time.Minute)}, LastSync: map[string]float64{"IPv4": at(0)}}, ""},
		{"slow syncs, 5m", kubeproxy.Figures{Syncs: []kubeproxy.SyncFigures{{Kind: kubeproxy.SyncFull, IPFamily: "IPv4", Count: 3, Mean: 120}},
			LastQueued: map[string]float64{"IPv4": at(5 * time.Minute)}, LastSync: map[string]float64{"IPv4": at(0)}}, "ipv4"},
		// A last sync that is not a number leaves the family open: neither
		// ok nor stale.
		{"unreadable last sync", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv4": at(0)}, Unreadable: map[string][]string{"IPv4": {"kubeproxy_sync_proxy_rules_last_timestamp_seconds"}}}, ""},
		{"queued in the future (clock stepped back)", kubeproxy.Figures{
			LastQueued: map[string]float64{"IPv4": at(time.Hour)}, LastSync: map[string]float64{"IPv4": at(0)}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var fams []string
			g := group{expect: backend.NFTables}
			for _, f := range g.staleSyncs(&c.f, now) {
				fams = append(fams, string(f.Family))
				if f.Kind != KindSyncStale || !strings.Contains(f.Message, "Likely causes: `nft -f` fails") || f.Fix != g.syncFailureFix() {
					t.Errorf("finding %+v", f)
				}
			}
			if strings.Join(fams, ",") != c.want {
				t.Errorf("stale families %q, want %q", fams, c.want)
			}
		})
	}
}

func fc(counter, fam string, n float64) kubeproxy.FailureCount {
	return kubeproxy.FailureCount{Counter: counter, IPFamily: fam, Count: n}
}

func TestRisingFailures(t *testing.T) {
	restore4 := func(n float64) kubeproxy.FailureCount { return fc(kubeproxy.FailIptablesRestore, "IPv4", n) }
	cases := []struct {
		name              string
		before, after     []kubeproxy.FailureCount
		unreadable        map[string][]string
		findings, warning string // "kind/family" lists
		message           string
	}{
		{"none counted", nil, nil, nil, "", "", ""},
		{"counted long ago, not since", []kubeproxy.FailureCount{restore4(3)}, []kubeproxy.FailureCount{restore4(3)}, nil, "", "", ""},
		{"restore failures rise", []kubeproxy.FailureCount{restore4(3)}, []kubeproxy.FailureCount{restore4(5)}, nil,
			"kube-proxy-sync-failing/ipv4", "", "kubeproxy_sync_proxy_rules_iptables_restore_failures_total 3 -> 5"},
		// kube-proxy creates the series at its first failure.
		{"first failure between the reads", nil, []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesSync, "IPv6", 1)}, nil,
			"kube-proxy-sync-failing/ipv6", "", "nftables_sync_failures_total 0 -> 1"},
		// A counter lower than before: kube-proxy restarted, and what it
		// counts now is new.
		{"restarted and failing", []kubeproxy.FailureCount{restore4(9)}, []kubeproxy.FailureCount{restore4(2)}, nil,
			"kube-proxy-sync-failing/ipv4", "", "0 -> 2"},
		{"restarted clean", []kubeproxy.FailureCount{restore4(9)}, nil, nil, "", "", ""},
		{"partial failures with their restores", []kubeproxy.FailureCount{restore4(1), fc(kubeproxy.FailIptablesPartialRestore, "IPv4", 1)},
			[]kubeproxy.FailureCount{restore4(2), fc(kubeproxy.FailIptablesPartialRestore, "IPv4", 2)}, nil,
			"kube-proxy-sync-failing/ipv4", "", "iptables_restore_failures_total 1 -> 2, kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total 1 -> 2"},
		{"partial failures alone", nil, []kubeproxy.FailureCount{fc(kubeproxy.FailIptablesPartialRestore, "IPv4", 1)}, nil,
			"", "kube-proxy-sync-failing/ipv4", "fell back to full syncs"},
		{"stale chain cleanup alone", nil, []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesCleanup, "IPv4", 4)}, nil,
			"", "kube-proxy-sync-failing/ipv4", "could not delete its stale IPv4 nftables chains"},
		{"unreadable counter", []kubeproxy.FailureCount{restore4(1)}, []kubeproxy.FailureCount{restore4(7)},
			map[string][]string{"IPv4": {"kubeproxy_sync_proxy_rules_nftables_sync_failures_total"}}, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := &kubeproxy.Figures{Failures: c.before}
			after := &kubeproxy.Figures{Failures: c.after, Unreadable: c.unreadable, LastSync: map[string]float64{"IPv4": at(0)}}
			findings, warnings := group{expect: backend.IptablesNFT}.risingFailures(before, after, 35*time.Second, t0.Add(5*time.Minute))
			list := func(fs []Finding) string {
				var out []string
				for _, f := range fs {
					out = append(out, f.Kind+"/"+string(f.Family))
				}
				return strings.Join(out, ",")
			}
			if list(findings) != c.findings || list(warnings) != c.warning {
				t.Fatalf("findings %q warnings %q, want %q and %q", list(findings), list(warnings), c.findings, c.warning)
			}
			for _, f := range append(findings, warnings...) {
				if !strings.Contains(f.Message, c.message) || !strings.Contains(f.Message, "within 35s") {
					t.Errorf("message %q, want it to say %q within 35s", f.Message, c.message)
				}
			}
			if len(findings) > 0 && (!strings.Contains(findings[0].Message, "Likely causes: iptables-restore fails") ||
				c.findings == "kube-proxy-sync-failing/ipv4" && !strings.Contains(findings[0].Message, "its last successful one was 5m0s ago")) {
				t.Errorf("message %q lacks the causes or the last sync", findings[0].Message)
			}
		})
	}
}

// counterPage is kube-proxy's page with the nftables sync failure counter
// at n, its last sync at the fake clock's start and nothing queued since.
func counterPage(n int64) string {
	page := fmt.Sprintf("kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"} %g\n"+
		"kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family=\"IPv4\"} %g\n", at(0), at(-time.Second))
	if n > 0 {
		page += fmt.Sprintf("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"} %d\n", n)
	}
	return page
}

// verify against a local kube-proxy whose counter moves by step per
// /metrics request; wait is --wait.
func verifyCounting(t *testing.T, start, step int64, wait time.Duration) (*Result, int32) {
	t.Helper()
	var reads atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("nftables")) })
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		n := reads.Add(1)
		w.Write([]byte(counterPage(start + step*int64(n-1))))
	})
	srv := serve(t, mux.ServeHTTP)
	clock := newFakeClock()
	fake := healthyFake(t, backend.NFTables)
	res := run(t, clock.on(Options{Expect: backend.NFTables, Reader: fake, ProxyModeURL: srv.URL + "/proxyMode", Wait: wait}))
	return res, reads.Load()
}

// A kube-proxy whose failure counter rises between verify's two reads
// fails verify with the finding; one that counted failures once and no
// more passes with a note, and so does a clean one, read once.
func TestVerifySeesRisingFailureCounters(t *testing.T) {
	res, reads := verifyCounting(t, 3, 2, 5*time.Minute)
	if res.Verdict != VerdictFailed || kinds(res) != "kube-proxy-sync-failing@nftables" || reads != 2 {
		t.Fatalf("verdict %s findings %s after %d reads, want the sync-failing finding after 2", res.Verdict, kinds(res), reads)
	}
	if msg := res.Findings[0].Message; !strings.Contains(msg, "nftables_sync_failures_total 3 -> 5") || !strings.Contains(msg, "within 35s") {
		t.Errorf("message %q", msg)
	}
	if n, _ := res.KubeProxy.Failure(kubeproxy.FailNFTablesSync, "IPv4"); n != 5 {
		t.Errorf("figures keep the second read: count %g, want 5", n)
	}

	res, reads = verifyCounting(t, 3, 0, 5*time.Minute)
	if res.Verdict != VerdictOK || reads != 2 || !strings.Contains(strings.Join(res.Notes, "\n"), "none in the 35s between verify's two reads") {
		t.Errorf("steady counter: verdict %s findings %s reads %d notes %q", res.Verdict, kinds(res), reads, res.Notes)
	}
	res, reads = verifyCounting(t, 0, 0, 5*time.Minute)
	if res.Verdict != VerdictOK || reads != 1 {
		t.Errorf("no failures: verdict %s reads %d, want ok after one read", res.Verdict, reads)
	}
	// --wait too short for a second read: a note says so.
	res, reads = verifyCounting(t, 3, 2, 0)
	if res.Verdict != VerdictOK || reads != 1 || !strings.Contains(strings.Join(res.Notes, "\n"), "needs a second read 35s later") {
		t.Errorf("no time: verdict %s reads %d notes %q", res.Verdict, reads, res.Notes)
	}
}

// Between watch runs: the previous run's read is the baseline, and a
// rise there is added to the new result, which settles failed.
func TestAddSyncFailures(t *testing.T) {
	prev := &kubeproxy.Figures{Failures: []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesSync, "IPv4", 1)}}
	r := &Result{Expect: backend.NFTables, Verdict: VerdictOK, OK: true,
		KubeProxy: &kubeproxy.Figures{Failures: []kubeproxy.FailureCount{fc(kubeproxy.FailNFTablesSync, "IPv4", 4)}}}
	r.AddSyncFailures(nil, time.Minute, t0)
	if !r.OK {
		t.Fatal("no baseline: nothing to compare")
	}
	r.AddSyncFailures(prev, 10*time.Minute, t0)
	r.AddSyncFailures(prev, 10*time.Minute, t0)
	if r.OK || r.Verdict != VerdictFailed || kinds(r) != "kube-proxy-sync-failing@nftables" || !strings.Contains(r.Findings[0].Message, "within 10m0s") {
		t.Errorf("verdict %s findings %s (%v), want one sync-failing finding", r.Verdict, kinds(r), r.Findings)
	}
}

// For any two pages kube-proxy's parser accepts, a family fails exactly
// when its restore or nftables sync counter rose (from 0 after a restart)
// and neither read left the family open; a warning only where a partial or
// cleanup counter alone rose.
func FuzzRisingFailures(f *testing.F) {
	f.Add([]byte(counterPage(3)), []byte(counterPage(5)))
	f.Add([]byte(counterPage(9)), []byte(counterPage(2)))
	f.Add([]byte(counterPage(0)), []byte("kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{ip_family=\"IPv6\"} 1\n"))
	f.Add([]byte(counterPage(1)), []byte("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"} NaN\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		before, _, err := kubeproxy.ParseFigures(a)
		if err != nil {
			return
		}
		after, _, err := kubeproxy.ParseFigures(b)
		if err != nil {
			return
		}
		rose := func(fam string, counters ...string) bool {
			for _, c := range counters {
				from, _ := before.Failure(c, fam)
				to, _ := after.Failure(c, fam)
				if to < from {
					from = 0
				}
				if to > from {
					return true
				}
			}
			return false
		}
		findings, warnings := group{expect: backend.NFTables}.risingFailures(before, after, time.Minute, t0)
		for _, fam := range []string{"IPv4", "IPv6"} {
			open := len(before.Unreadable[fam]) > 0 || len(after.Unreadable[fam]) > 0
			failing := !open && rose(fam, kubeproxy.FailIptablesRestore, kubeproxy.FailNFTablesSync)
			warned := !open && !failing && rose(fam, kubeproxy.FailIptablesPartialRestore, kubeproxy.FailNFTablesCleanup)
			count := func(fs []Finding) (n int) {
				for _, f := range fs {
					if f.Family == ruleFamily(fam) {
						n++
					}
				}
				return n
			}
			if got := count(findings); got != map[bool]int{true: 1, false: 0}[failing] {
				t.Errorf("%s: %d findings, want failing=%v (before %v, after %v)", fam, got, failing, before.Failures, after.Failures)
			}
			if got := count(warnings); got != map[bool]int{true: 1, false: 0}[warned] {
				t.Errorf("%s: %d warnings, want %v (before %v, after %v)", fam, got, warned, before.Failures, after.Failures)
			}
		}
	})
}
