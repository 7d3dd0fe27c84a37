package watch

import (
	"fmt"
	"path"
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

// WriteMetrics writes the drift textfile atomically into dir (a host path
// under root). A missing directory means node_exporter is not set up to
// read it: nothing is written, and no error.
func WriteMetrics(root hostfs.Root, dir string, drifting bool, transitions int) error {
	if dir == "" {
		return nil
	}
	if fi, err := root.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	file := path.Join(dir, MetricsFile)
	if _, err := root.WriteFileAtomic(file, Metrics(drifting, transitions), 0o644); err != nil {
		return fmt.Errorf("write drift metrics %s: %w", root.Path(file), err)
	}
	return nil
}
