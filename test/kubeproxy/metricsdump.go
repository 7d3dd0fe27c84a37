package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"k8s.io/component-base/metrics/legacyregistry"
)

// dumpMetrics writes what kube-proxy's metrics server would answer on
// GET /metrics right now: the same registry through the same handler, so
// the file is byte-for-byte kube-proxy's exposition format (verify's parser
// is tested against such a page).
func dumpMetrics(file string) error {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	legacyregistry.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("metrics handler answered %d", rec.Code)
	}
	if err := os.WriteFile(file, rec.Body.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing kube-proxy's metrics page: %w", err)
	}
	return nil
}
