package proof

import (
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// CensusMetricsFile is watch's textfile of its last legacy-xtables census:
// its own file, since the census runs on its own schedule (census.interval),
// and a census that cannot run must not take verify's series with it.
const CensusMetricsFile = "rke2_proxy_backend_census.prom"

// AnnotationLegacyFree is the census on the Node (vocab names it for the
// fleet view too).
const AnnotationLegacyFree = vocab.NodeAnnotationLegacyFree

// maxPodsNamed bounds the pods the annotation names: the fleet view shows
// the node, `census` on it shows them all.
const maxPodsNamed = 5

// LegacyFreeValue is c as the Node annotation says it: "yes", "no;
// namespaces=N[; host][; pods=UID,...[,+M]]" or "unknown; why".
func LegacyFreeValue(c *census.Census) string {
	switch c.Verdict {
	case census.Yes:
		return "yes"
	case census.No:
		parts := []string{"no", fmt.Sprintf("namespaces=%d", len(c.HeldBackBy))}
		var pods []string
		for _, r := range c.HeldBackBy {
			switch {
			case r.Host:
				parts = append(parts, "host")
			case r.PodUID != "":
				pods = append(pods, r.PodUID)
			}
		}
		if n := len(pods) - maxPodsNamed; n > 0 {
			pods = append(pods[:maxPodsNamed:maxPodsNamed], fmt.Sprintf("+%d", n))
		}
		if len(pods) > 0 {
			parts = append(parts, "pods="+strings.Join(pods, ","))
		}
		return strings.Join(parts, "; ")
	}
	why := c.Reason
	if len(why) > 200 {
		why = why[:200] + "..."
	}
	return "unknown; " + why
}

// CensusMetrics renders c, which took took and ended at now. The verdict
// series are absent while the census cannot tell, so a 0 is never read as
// "held back" nor a 1 as free when a namespace was not read.
func CensusMetrics(c *census.Census, took time.Duration, now time.Time) []byte {
	var b strings.Builder
	gauge(&b, "rke2_proxy_backend_legacy_free", "1 when no network namespace on the node (host and pods) holds legacy xtables rules, so it can move to a kernel without them; 0 when one does; no series while the census cannot tell.")
	gauge(&b, "rke2_proxy_backend_legacy_xtables_namespaces", "Network namespaces (host and pods) holding legacy xtables rules at the last census; no series while it cannot tell.")
	if c.Verdict != census.Unknown {
		fmt.Fprintf(&b, "rke2_proxy_backend_legacy_free %d\n", one(c.LegacyFree))
		fmt.Fprintf(&b, "rke2_proxy_backend_legacy_xtables_namespaces %d\n", len(c.HeldBackBy))
	}
	gauge(&b, "rke2_proxy_backend_census_cannot_tell", "1 when the last census could not read every namespace (or a round's bound left some).")
	fmt.Fprintf(&b, "rke2_proxy_backend_census_cannot_tell %d\n", one(c.Verdict == census.Unknown))
	gauge(&b, "rke2_proxy_backend_nft_compat_namespaces", "Network namespaces whose nftables rules use xtables extensions (nft_compat) at the last census.")
	fmt.Fprintf(&b, "rke2_proxy_backend_nft_compat_namespaces %d\n", c.NFTCompat)
	gauge(&b, "rke2_proxy_backend_census_namespaces", "Network namespaces the last census read, the host's included.")
	fmt.Fprintf(&b, "rke2_proxy_backend_census_namespaces %d\n", len(c.Namespaces))
	gauge(&b, "rke2_proxy_backend_census_duration_seconds", "Wall time of the last census.")
	fmt.Fprintf(&b, "rke2_proxy_backend_census_duration_seconds %g\n", took.Seconds())
	gauge(&b, "rke2_proxy_backend_census_last_run_timestamp_seconds", "Unix time the last census finished.")
	fmt.Fprintf(&b, "rke2_proxy_backend_census_last_run_timestamp_seconds %d\n", now.Unix())
	return []byte(b.String())
}

// WriteCensusMetrics writes CensusMetrics into dir under root, atomically
// (no file when dir is "" or absent, as for verify's).
func WriteCensusMetrics(root hostfs.Root, dir string, c *census.Census, took time.Duration, now time.Time) error {
	_, err := writeTextfile(root, dir, CensusMetricsFile, func() []byte { return CensusMetrics(c, took, now) })
	return err
}
