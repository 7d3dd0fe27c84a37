package proof

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

const uidA = "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"

func heldBack(pods int, host bool) *census.Census {
	c := &census.Census{Verdict: census.No}
	if host {
		c.HeldBackBy = append(c.HeldBackBy, census.Ref{Where: census.Where{Host: true}})
	}
	for range pods {
		c.HeldBackBy = append(c.HeldBackBy, census.Ref{Where: census.Where{PodUID: uidA}})
	}
	return c
}

// The annotation says yes, no with what holds the node back (at most
// five pods by UID), or unknown with why.
func TestLegacyFreeValue(t *testing.T) {
	for _, tc := range []struct {
		c    *census.Census
		want string
	}{
		{&census.Census{Verdict: census.Yes, LegacyFree: true}, "yes"},
		{heldBack(1, true), "no; namespaces=2; host; pods=" + uidA},
		{heldBack(0, true), "no; namespaces=1; host"},
		{heldBack(7, false), "no; namespaces=7; pods=" + strings.Repeat(uidA+",", 5) + "+2"},
		{&census.Census{Verdict: census.Unknown, Reason: "1 namespace could not be read"}, "unknown; 1 namespace could not be read"},
	} {
		if got := LegacyFreeValue(tc.c); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// The census textfile passes Prometheus's linter; the verdict series are
// there when the census could tell and absent when it could not.
func TestCensusMetrics(t *testing.T) {
	at := time.Unix(1765000000, 0)
	no := CensusMetrics(heldBack(2, true), time.Second, at)
	check.PromtoolMetrics(t, no)
	check.Says(t, "census metrics", string(no), "rke2_proxy_backend_legacy_free 0\n", "rke2_proxy_backend_legacy_xtables_namespaces 3\n", "rke2_proxy_backend_census_cannot_tell 0\n")
	yes := CensusMetrics(&census.Census{Verdict: census.Yes, LegacyFree: true, NFTCompat: 4}, time.Second, at)
	check.PromtoolMetrics(t, yes)
	check.Says(t, "census metrics", string(yes), "rke2_proxy_backend_legacy_free 1\n", "rke2_proxy_backend_legacy_xtables_namespaces 0\n", "rke2_proxy_backend_nft_compat_namespaces 4\n")
	unknown := string(CensusMetrics(&census.Census{Verdict: census.Unknown}, time.Second, at))
	check.Says(t, "census metrics", unknown, "rke2_proxy_backend_census_cannot_tell 1\n")
	if strings.Contains(unknown, "rke2_proxy_backend_legacy_free 0") || strings.Contains(unknown, "rke2_proxy_backend_legacy_xtables_namespaces 0") {
		t.Errorf("a census that cannot tell has verdict series:\n%s", unknown)
	}
}

// The census reaches the Node as an annotation, and a new census value is
// worth a write; before any census the key is left out of the patch.
func TestCensusAnnotation(t *testing.T) {
	s := State{}
	p, err := annotationPatch(s, time.Time{}, time.Minute)
	if err != nil || strings.Contains(string(p), AnnotationLegacyFree) {
		t.Errorf("no census yet: patch %s (%v) has %s", p, err, AnnotationLegacyFree)
	}
	s2 := s
	s2.LegacyFree = "no; namespaces=1; host"
	p, err = annotationPatch(s2, time.Time{}, time.Minute)
	if err != nil || !strings.Contains(string(p), `"`+AnnotationLegacyFree+`":"no; namespaces=1; host"`) {
		t.Errorf("patch %s (%v) lacks the census", p, err)
	}
	if same(s, s2) {
		t.Error("a new census value is not worth a write")
	}
}
