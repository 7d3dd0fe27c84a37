package kubeproxy

import "testing"

// Only kube-proxy's own metrics server on this node is ever asked.
func TestCheckProxyModeURL(t *testing.T) {
	for _, ok := range []string{DefaultProxyModeURL, "http://127.0.0.2:9999/proxyMode", "http://[::1]:10249/proxyMode"} {
		if err := CheckProxyModeURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://127.0.0.1:10249/proxyMode", "http://10.0.0.1:10249/proxyMode", "http://localhost:10249/proxyMode",
		"http://example.com/proxyMode", "http://127.0.0.1/proxyMode", "http://127.0.0.1:10249/metrics", "http://u@127.0.0.1:10249/proxyMode",
		"http://127.0.0.1:10249/proxyMode?x=1", "file:///etc/shadow"} {
		if err := CheckProxyModeURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
