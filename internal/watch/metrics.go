package watch

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// MetricsFile is watch's own textfile next to verify's: verify's file is
// rewritten by every verify run (the oneshot unit's too), so the drift
// series live apart and neither writer clobbers the other's.
const MetricsFile = "rke2_proxy_backend_watch.prom"

// Metrics renders the drift series in the Prometheus text format.
func Metrics(drifting bool, transitions int) []byte {
	var b strings.Builder
	verify.BuildInfo(&b, "watch")
	d := 0
	if drifting {
		d = 1
	}
	b.WriteString("# HELP rke2_proxy_backend_drift 1 while kube-proxy's rules have been wrong for longer than the watch grace period.\n")
	b.WriteString("# TYPE rke2_proxy_backend_drift gauge\n")
	fmt.Fprintf(&b, "rke2_proxy_backend_drift %d\n", d)
	b.WriteString("# HELP rke2_proxy_backend_drift_transitions_total Drift starts and recoveries seen since the watch service started.\n")
	b.WriteString("# TYPE rke2_proxy_backend_drift_transitions_total counter\n")
	fmt.Fprintf(&b, "rke2_proxy_backend_drift_transitions_total %d\n", transitions)
	return []byte(b.String())
}

// WriteMetrics writes the drift textfile into dir (see writeTextfile).
func WriteMetrics(root hostfs.Root, dir string, drifting bool, transitions int) error {
	return writeTextfile(root, dir, MetricsFile, func() []byte { return Metrics(drifting, transitions) })
}
