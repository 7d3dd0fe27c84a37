package kubeproxy

import (
	"math"
	"os"
	"strings"
	"testing"
)

// The testdata pages are kube-proxy 1.37's real /metrics after its first
// sync of 50 dual-stack Services, written by the oracle
// (test/kubeproxy --metrics-out) through kube-proxy's own registry and
// handler: iptables mode with iptables-legacy, and nftables mode.
const (
	realIptablesPage = "testdata/kube-proxy-v1.37-iptables-metrics.prom"
	realNftablesPage = "testdata/kube-proxy-v1.37-nftables-metrics.prom"
)

func readPage(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKubeProxyFiguresFromRealPages(t *testing.T) {
	for _, c := range []struct {
		file     string
		iptables bool
	}{{realIptablesPage, true}, {realNftablesPage, false}} {
		t.Run(c.file, func(t *testing.T) {
			f, notes, err := ParseFigures(readPage(t, c.file))
			if err != nil || len(notes) != 0 {
				t.Fatal(err, notes)
			}
			// One full sync per family, counted in the all and full
			// histograms, none partial yet.
			var got []string
			for _, s := range f.Syncs {
				got = append(got, s.Kind+"/"+s.IPFamily)
				if s.Count != 1 || s.Mean <= 0 || s.Mean > 60 {
					t.Errorf("%s/%s: count %g mean %g, want one sync of a plausible duration", s.Kind, s.IPFamily, s.Count, s.Mean)
				}
				// With one sync the p99 lies in the bucket of that sync,
				// whose duration is the mean: never below half of it, never
				// above its bucket's bound (ExponentialBuckets(0.001, 2, 15)).
				if s.P99 == nil || *s.P99 < s.Mean/2 || *s.P99 > 2*s.Mean+0.001 {
					t.Errorf("%s/%s: p99 %v outside the bucket of the only sync (%g)", s.Kind, s.IPFamily, s.P99, s.Mean)
				}
			}
			if want := "all/IPv4 all/IPv6 full/IPv4 full/IPv6"; strings.Join(got, " ") != want {
				t.Errorf("syncs %q, want %q", got, want)
			}
			if len(f.LastSync) != 2 || f.LastSync["IPv4"] < 1.7e9 || f.LastSync["IPv6"] < 1.7e9 {
				t.Errorf("last sync %v, want a Unix time per family", f.LastSync)
			}
			// The oracle fed 50 Services to each family's proxier and one
			// EndpointSlice per Service.
			if f.ServiceChanges != 100 || f.EndpointChanges != 50 {
				t.Errorf("service changes %g endpoint changes %g, want 100 and 50", f.ServiceChanges, f.EndpointChanges)
			}
			if c.iptables != (len(f.IptablesRules) == 4) || c.iptables && f.IptablesRules["IPv4/nat"] < 50 {
				t.Errorf("iptables rules %v (iptables mode %v)", f.IptablesRules, c.iptables)
			}
		})
	}
}

func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		buckets map[float64]float64
		want    float64
	}{
		{nil, 0},
		{map[float64]float64{1: 0, inf: 0}, 0},
		// 100 syncs all under 1s: p99 at 0.99 of the first bucket.
		{map[float64]float64{1: 100, 2: 100, inf: 100}, 0.99},
		// 90 under 1s, 10 between 1 and 2s: rank 99 is 9/10 into (1,2].
		{map[float64]float64{1: 90, 2: 100, inf: 100}, 1.9},
		// The slowest 5% beyond the last bound: the last finite bound.
		{map[float64]float64{1: 50, 16.384: 95, inf: 100}, 16.384},
	} {
		if got := bucketQuantile(0.99, c.buckets); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("p99 of %v = %g, want %g", c.buckets, got, c.want)
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// The quantile of any buckets verify accepts (finite or +Inf bounds,
// cumulative counts that never fall) is finite, never below the lowest
// bound's floor (0 or the lowest bound) nor above the highest finite bound,
// and never falls when q rises.
func FuzzBucketQuantile(f *testing.F) {
	f.Add(0.1, 50.0, 1.0, 90.0, 100.0)
	f.Add(-1e308, 1.0, 1.7e308, 100.0, 100.0)
	f.Add(1e-300, 0.0, 1e300, 1e300, 1e308)
	f.Fuzz(func(t *testing.T, le1, c1, le2, c2, cInf float64) {
		buckets := map[float64]float64{le1: c1, le2: c2, math.Inf(1): cInf}
		for le, c := range buckets {
			if math.IsNaN(le) || math.IsInf(le, -1) || !finite(c) || c < 0 {
				return // ParseFigures never passes these on
			}
		}
		if monotonic(buckets) != "" {
			return
		}
		lo, hi := math.Min(0, math.Min(le1, le2)), math.Max(0, math.Max(le1, le2))
		prev := math.Inf(-1)
		for _, q := range []float64{0.5, 0.9, 0.99} {
			v := bucketQuantile(q, buckets)
			if !finite(v) {
				t.Fatalf("quantile %g of %v = %g, not finite", q, buckets, v)
			}
			if v < lo || v > hi {
				t.Fatalf("quantile %g of %v = %g, outside [%g, %g]", q, buckets, v, lo, hi)
			}
			if v < prev {
				t.Fatalf("quantile %g of %v = %g, below the lower quantile's %g", q, buckets, v, prev)
			}
			prev = v
		}
	})
}

func TestParseExpositionLines(t *testing.T) {
	all := func(string) bool { return true }
	good := "# HELP x y\n# TYPE x gauge\nx 1\ny{a=\"b\\\"c\\\\d\\ne\",z=\"\"} +Inf 1700000000000\n\nw{} NaN\n"
	s, err := ParseExposition([]byte(good), all)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 3 || s[1].Labels["a"] != "b\"c\\d\ne" || !math.IsInf(s[1].Value, 1) || !math.IsNaN(s[2].Value) {
		t.Errorf("parsed %+v", s)
	}
	for _, bad := range []string{"x", "x y", "x{a=\"b\" 1", "x{a=b} 1", "x{a=\"b\",a=\"c\"} 1", "x 1 2 3", "x{a=\"\\q\"} 1", "9x 1", "x{a=\"b\"}1", "x 1 1.5"} {
		if _, err := ParseExposition([]byte(bad+"\n"), all); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
}

func FuzzParseExposition(f *testing.F) {
	f.Add(readPage(f, realIptablesPage))
	f.Add(readPage(f, realNftablesPage))
	f.Add([]byte("kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"+Inf\"} 3\n"))
	f.Add([]byte("x{a=\"\\\\\"} 1 2\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		samples, err := ParseExposition(page, func(string) bool { return true })
		if err != nil {
			return
		}
		for _, s := range samples {
			if s.Name == "" || !isNameChar(s.Name[0], true) {
				t.Fatalf("sample with bad name %q", s.Name)
			}
		}
		fig, _, err := ParseFigures(page)
		if err != nil {
			return
		}
		for _, s := range fig.Syncs {
			if s.Count <= 0 || (s.IPFamily != "IPv4" && s.IPFamily != "IPv6") {
				t.Fatalf("sync figures %+v", s)
			}
			// Every figure copied is finite, or left out.
			if !finite(s.Mean) || s.P99 != nil && !finite(*s.P99) {
				t.Fatalf("sync figures %+v: not finite", s)
			}
		}
		if len(fig.Syncs) > 6 || len(fig.LastSync) > 2 || len(fig.IptablesRules) > maxIptablesRuleSeries {
			t.Fatalf("figures not bounded: %d syncs, %d last syncs, %d rule series", len(fig.Syncs), len(fig.LastSync), len(fig.IptablesRules))
		}
		for k := range fig.IptablesRules {
			fam, table, _ := strings.Cut(k, "/")
			if !plainLabel(fam) || !plainLabel(table) {
				t.Fatalf("label %q would need escaping in our metrics", k)
			}
		}
	})
}
