package verify

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// kube-proxy's own word on its syncs, judged from two reads of its
// /metrics (verify's within its wait, watch's between its runs).
const (
	// KindSyncFailing: a failure counter of kube-proxy's rose between two
	// reads. A rise of the partial-restore or stale-chain cleanup counter
	// alone is a warning: kube-proxy retries those as a full sync.
	KindSyncFailing = "kube-proxy-sync-failing"
	// KindSyncStale: a change kube-proxy queued has waited longer than
	// staleAfter without a successful sync.
	KindSyncStale = "kube-proxy-sync-stale"
)

// staleSyncFloor is the least time a queued change may wait for a
// successful sync before it is a finding: kube-proxy's own /healthz turns
// unhealthy when a change has waited 2 × its sync period
// (cmd/kube-proxy/app/server.go, NewProxyHealthServer(..., 2*SyncPeriod);
// the period is 30 s by default and RKE2 sets none). The last-queued
// timestamp is never older than the oldest waiting change, so past this
// kube-proxy's healthz fails too.
const staleSyncFloor = 60 * time.Second

// staleAfter is how long a queued change may wait on this kube-proxy: the
// floor, or twice its slowest mean sync when that is longer, because a
// healthy kube-proxy applies a change queued during a sync only with the
// next one (iptables-nft takes over 2 minutes per sync at 10k Services).
func staleAfter(f *kubeproxy.Figures) time.Duration {
	d := staleSyncFloor
	for _, s := range f.Syncs {
		if m := time.Duration(2 * s.Mean * float64(time.Second)); m > d {
			d = m
		}
	}
	return d
}

// failureRecheck is how long verify waits before reading kube-proxy's
// counters again once it has counted failures: a kube-proxy whose syncs
// still fail retries after its sync period (the runner's retry interval,
// 30 s by default) and counts again; 5 s more covers that sync's own run.
const failureRecheck = 35 * time.Second

// failed says whether kube-proxy has counted any sync failure.
func failed(f *kubeproxy.Figures) bool {
	for _, c := range f.Failures {
		if c.Count > 0 {
			return true
		}
	}
	return false
}

// staleSyncs finds the families where the change kube-proxy queued last
// has waited past staleAfter at now with no successful sync since. A
// family with an unreadable signal is left open (ParseFigures noted it).
func (g group) staleSyncs(f *kubeproxy.Figures, now time.Time) []Finding {
	expect := g.expect
	limit := staleAfter(f)
	var out []Finding
	for _, fam := range slices.Sorted(maps.Keys(f.LastQueued)) {
		if len(f.Unreadable[fam]) > 0 {
			continue
		}
		queued := f.LastQueued[fam]
		last, synced := f.LastSync[fam]
		if synced && last >= queued {
			continue
		}
		waited := now.Sub(unixTime(queued))
		if waited <= limit {
			continue
		}
		what := fmt.Sprintf("kube-proxy queued an %s sync %s ago and has completed none since (its last successful one was %s ago)",
			fam, waited.Round(time.Second), now.Sub(unixTime(last)).Round(time.Second))
		if !synced {
			what = fmt.Sprintf("kube-proxy queued its first %s sync %s ago and has completed none since (it syncs once it has the API server's Services and EndpointSlices)",
				fam, waited.Round(time.Second))
		}
		out = append(out, Finding{Kind: KindSyncStale, Backend: expect, Family: ruleFamily(fam),
			Message: fmt.Sprintf("%s, longer than the %s verify allows (kube-proxy's own /healthz fails after 2 × its sync period, 60s by default): Service changes are not reaching the rules%s. %s",
				what, limit.Round(time.Second), countedSoFar(f, fam), likelyCauses(expect)),
			Fix: g.syncFailureFix()})
	}
	return out
}

// risingFailures compares two reads of kube-proxy's counters taken
// between apart (before first). A counter that fell means kube-proxy
// restarted in between: all it counts now is new. A family with an
// unreadable signal in either read is left open.
func (g group) risingFailures(before, after *kubeproxy.Figures, between time.Duration, now time.Time) (findings, warnings []Finding) {
	expect := g.expect
	rose := map[string]map[string][2]float64{} // family -> counter -> {from, to}
	for _, c := range append(append([]kubeproxy.FailureCount{}, before.Failures...), after.Failures...) {
		if len(before.Unreadable[c.IPFamily]) > 0 || len(after.Unreadable[c.IPFamily]) > 0 {
			continue
		}
		from, _ := before.Failure(c.Counter, c.IPFamily)
		to, _ := after.Failure(c.Counter, c.IPFamily)
		if to < from {
			from = 0
		}
		if to > from {
			if rose[c.IPFamily] == nil {
				rose[c.IPFamily] = map[string][2]float64{}
			}
			rose[c.IPFamily][c.Counter] = [2]float64{from, to}
		}
	}
	fams := make([]string, 0, len(rose))
	for fam := range rose {
		fams = append(fams, fam)
	}
	sort.Strings(fams)
	for _, fam := range fams {
		counters := rose[fam]
		var parts []string
		for _, c := range []string{kubeproxy.FailIptablesRestore, kubeproxy.FailIptablesPartialRestore, kubeproxy.FailNFTablesSync, kubeproxy.FailNFTablesCleanup} {
			if r, ok := counters[c]; ok {
				parts = append(parts, fmt.Sprintf("%s %g -> %g", kubeproxy.FailureCounterName(c), r[0], r[1]))
			}
		}
		rise := strings.Join(parts, ", ")
		last := "it has no successful sync yet"
		if l, ok := after.LastSync[fam]; ok {
			last = fmt.Sprintf("its last successful one was %s ago", now.Sub(unixTime(l)).Round(time.Second))
		}
		_, restore := counters[kubeproxy.FailIptablesRestore]
		_, sync := counters[kubeproxy.FailNFTablesSync]
		_, cleanup := counters[kubeproxy.FailNFTablesCleanup]
		f := Finding{Kind: KindSyncFailing, Backend: expect, Family: ruleFamily(fam), Fix: g.syncFailureFix()}
		switch {
		case restore || sync:
			f.Message = fmt.Sprintf("kube-proxy's %s rule syncs are failing: within %s %s (%s). %s",
				fam, between.Round(time.Second), rise, last, likelyCauses(expect))
			findings = append(findings, f)
		case len(counters) == 1 && cleanup:
			f.Message = fmt.Sprintf("kube-proxy could not delete its stale %s nftables chains: within %s %s; it retries, and its syncs still run (%s): something else may refer to its chains",
				fam, between.Round(time.Second), rise, last)
			warnings = append(warnings, f)
		default:
			f.Message = fmt.Sprintf("kube-proxy's %s partial syncs failed and it fell back to full syncs: within %s %s (%s): something else may rewrite kube-proxy's chains (a firewall reload, another agent)",
				fam, between.Round(time.Second), rise, last)
			warnings = append(warnings, f)
		}
	}
	return findings, warnings
}

// likelyCauses names what makes kube-proxy's writes fail in each backend;
// the findings of detect and verify that prove one are other checks'.
func likelyCauses(b backend.Backend) string {
	tool := "iptables-restore"
	skew := "the image's iptables at odds with the host's (userspace skew)"
	if b == backend.NFTables {
		tool = "`nft -f`"
		skew = "the image's nft older than the host's that wrote sets with user data (userspace skew; kube-proxy logs 'Failed to list existing sets')"
	}
	return fmt.Sprintf("Likely causes: %s fails inside kube-proxy's image because the %s backend is unusable on this kernel (modules or nf_tables missing), %s, or a feature gate or argument this kube-proxy version no longer takes",
		tool, b, skew)
}

// countedSoFar says which failures kube-proxy has counted for fam.
func countedSoFar(f *kubeproxy.Figures, fam string) string {
	var parts []string
	for _, c := range f.Failures {
		if c.IPFamily == fam && c.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s %g", kubeproxy.FailureCounterName(c.Counter), c.Count))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (counted since it started: " + strings.Join(parts, ", ") + ")"
}

// AddSyncFailures judges the rise of kube-proxy's failure counters from
// prev, an earlier read (the previous watch run's), to r's own read,
// between apart and ending at now; it adds the findings and warnings r
// does not have yet and settles r's verdict again. Either read missing
// leaves r as it is.
func (r *Result) AddSyncFailures(prev *kubeproxy.Figures, between time.Duration, now time.Time) {
	if prev == nil || r.KubeProxy == nil {
		return
	}
	findings, warnings := newGroup(Options{Expect: r.Expect, Distribution: r.distribution, Units: r.units}).risingFailures(prev, r.KubeProxy, between, now)
	r.Findings = appendNew(r.Findings, findings)
	r.Warnings = appendNew(r.Warnings, warnings)
	r.settle()
}

// appendNew appends the findings whose kind and family have none in to.
func appendNew(to, more []Finding) []Finding {
	for _, f := range more {
		dup := false
		for _, g := range to {
			dup = dup || g.Kind == f.Kind && g.Family == f.Family
		}
		if !dup {
			to = append(to, f)
		}
	}
	return to
}

func unixTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}

// ruleFamily is kube-proxy's ip_family label as the rules' family.
func ruleFamily(fam string) rules.Family {
	if fam == "IPv6" {
		return rules.IPv6
	}
	return rules.IPv4
}
