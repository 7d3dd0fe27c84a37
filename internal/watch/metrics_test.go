package watch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

// The textfile watch writes passes Prometheus's linter, steady and drifting.
func TestMetricsPassPromtool(t *testing.T) {
	check.PromtoolMetrics(t, Metrics(false, 0))
	check.PromtoolMetrics(t, Metrics(true, 3))
}

func TestWriteMetrics(t *testing.T) {
	root := hostfs.New(t.TempDir())
	dir := "/var/lib/prometheus/node-exporter"
	// No textfile directory: node_exporter is not set up, nothing written.
	if err := WriteMetrics(root, dir, true, 1); err != nil {
		t.Fatal(err)
	}
	if root.Exists(filepath.Join(dir, MetricsFile)) {
		t.Fatal("wrote metrics into a directory that did not exist")
	}
	if err := os.MkdirAll(root.Path(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteMetrics(root, dir, true, 1); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(root.Path(filepath.Join(dir, MetricsFile)))
	if err != nil {
		t.Fatal(err)
	}
	check.Says(t, "metrics", string(got), "rke2_proxy_backend_drift 1\n", "rke2_proxy_backend_drift_transitions_total 1\n")
}
