package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestDetectExitCodes(t *testing.T) {
	const cfg = "/etc/rke2-proxy-backend/config.yaml"
	tests := []struct {
		name       string
		host       func(*testhost.Host)
		env        map[string]string
		wantCode   int
		wantStdout string // substring
		wantStderr string // whole stderr when the code is 2
	}{
		{name: "debian 12 decides", host: func(h *testhost.Host) { h.Debian12() },
			wantCode: 0, wantStdout: "backend: iptables-nft (source: auto)\n"},
		{name: "bad yaml", host: func(h *testhost.Host) { h.Debian12().File(cfg, "backend: auto\n  prefer: [x\n") },
			wantCode: 2, wantStderr: "rke2-proxy-backend: " + cfg + ": not valid YAML: line 2: mapping values are not allowed in this context\n"},
		{name: "unknown key", host: func(h *testhost.Host) { h.Debian12().File(cfg, "backnd: auto\n") },
			wantCode: 2, wantStderr: "rke2-proxy-backend: " + cfg + `: unknown key "backnd" (valid keys: backend, prefer, legacy_triggers, respect_rke2_config, kube_proxy, node_label, node_taint, on_failure, verify, cni, census)` + "\n"},
		{name: "backend modern", host: func(h *testhost.Host) { h.Debian12().File(cfg, "backend: modern\n") },
			wantCode: 2, wantStderr: "rke2-proxy-backend: " + cfg + `: backend: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)` + "\n"},
		{name: "garbage cmdline", host: func(h *testhost.Host) { h.Debian12().Cmdline("ro quiet rke2.proxy_backend=modern") },
			wantCode: 2, wantStderr: `rke2-proxy-backend: /proc/cmdline: rke2.proxy_backend=modern: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)` + "\n"},
		{name: "env backend", host: func(h *testhost.Host) { h.Debian12() }, env: map[string]string{"RKE2_PROXY_BACKEND": "legacy"},
			wantCode: 2, wantStderr: `rke2-proxy-backend: environment variable RKE2_PROXY_BACKEND: "legacy" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables ("legacy" is the IPTABLES_MODE value; the backend is called iptables-legacy)` + "\n"},
		{name: "unreadable kernel config still prints the decision", host: func(h *testhost.Host) {
			h.Synology44().File("/proc/config.gz", "this is not gzip\n")
		}, wantCode: 2, wantStdout: "backend: iptables-legacy (source: auto)\n"},
		{name: "cmdline override", host: func(h *testhost.Host) { h.Debian12().Cmdline("ro rke2.proxy_backend=iptables-legacy") },
			wantCode: 0, wantStdout: "backend: iptables-legacy (source: cmdline)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			h := testhost.New(t)
			tt.host(h)
			code, stdout, stderr := runIn(t, h.Dir(), "detect")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout)
			}
			if tt.wantStderr != "" && stderr != tt.wantStderr {
				t.Errorf("stderr\n got %q\nwant %q", stderr, tt.wantStderr)
			}
			if code == 2 && tt.wantStderr == "" && !strings.Contains(stderr, "/proc/config.gz") {
				t.Errorf("stderr does not name the unreadable file:\n%s", stderr)
			}
			if code == 0 && stderr != "" {
				t.Errorf("stderr on success:\n%s", stderr)
			}
		})
	}
}

func TestDetectJSONShape(t *testing.T) {
	h := testhost.New(t).Synology44().File("/etc/rke2-proxy-backend/config.yaml", "on_failure: block\nverify: {wait: 90s}\n")
	t.Setenv("RKE2_PROXY_BACKEND_NODE_LABEL", "false")
	code, stdout, stderr := runIn(t, h.Dir(), "detect", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Schema   *int           `json:"schema"`
		Facts    map[string]any `json:"facts"`
		Settings map[string]any `json:"settings"`
		Decision map[string]any `json:"decision"`
		// host_conflicts is always there (an empty list on a quiet host).
		HostConflicts []map[string]string `json:"host_conflicts"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("top level: want exactly schema, facts, settings, decision and host_conflicts: %v\n%s", err, stdout)
	}
	if doc.Schema == nil || *doc.Schema != 1 {
		t.Errorf("schema = %v, want 1", doc.Schema)
	}
	if doc.Facts == nil || doc.Settings == nil || doc.Decision == nil {
		t.Fatalf("facts, settings or decision missing:\n%s", stdout)
	}
	for _, k := range []string{"backend", "proxy_mode", "iptables_mode", "source", "modules", "kube_proxy_args", "kube_proxy_env", "reasons"} {
		if _, ok := doc.Decision[k]; !ok {
			t.Errorf("decision lacks %q", k)
		}
	}
	if doc.Decision["backend"] != "iptables-legacy" {
		t.Errorf("backend %v, want iptables-legacy", doc.Decision["backend"])
	}
	// The effective settings, each from the layer that set it.
	want := map[string]any{
		"on_failure":          "block", // file
		"node_label":          false,   // environment
		"verify":              map[string]any{"wait": "1m30s", "textfile_dir": "/var/lib/prometheus/node-exporter", "node_feature_file": true, "node_condition": true},
		"backend":             "auto",
		"respect_rke2_config": true,
		"file":                "/etc/rke2-proxy-backend/config.yaml",
	}
	for k, v := range want {
		got, _ := json.Marshal(doc.Settings[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("settings.%s = %s, want %s", k, got, exp)
		}
	}
}
