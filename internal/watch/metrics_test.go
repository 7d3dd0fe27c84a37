package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

func TestMetricsPassPromtool(t *testing.T) {
	for _, c := range []struct {
		drifting bool
		n        int
	}{{false, 0}, {true, 3}} {
		check.PromtoolMetrics(t, Metrics(c.drifting, c.n))
	}
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
	for _, want := range []string{"rke2_proxy_backend_drift 1\n", "rke2_proxy_backend_drift_transitions_total 1\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
}
