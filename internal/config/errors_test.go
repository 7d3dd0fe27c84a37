package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

var f = hostfs.ConfigFile

// TestErrors pins every error message: an operator reads these at boot, so
// they must name the source, the key and the value, and say what to do.
func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     []string
		cmdline []string
		want    string
	}{
		{name: "bad yaml", file: "backend: auto\n  prefer: [x\n",
			want: f + ": not valid YAML: line 2: mapping values are not allowed in this context"},
		{name: "two documents", file: "backend: auto\n---\nbackend: off\n",
			want: f + ": holds more than one YAML document (a --- separator): put every key in one document"},
		{name: "top level list", file: "- backend\n",
			want: f + `: the top level must be keys such as "backend: auto", not a list`},
		{name: "unknown key", file: "backnd: auto\n",
			want: f + `: unknown key "backnd" (valid keys: backend, prefer, legacy_triggers, respect_rke2_config, kube_proxy, node_label, node_taint, on_failure, verify, cni, census)`},
		{name: "wrong case", file: "Backend: auto\n",
			want: f + `: unknown key "Backend" (valid keys: backend, prefer, legacy_triggers, respect_rke2_config, kube_proxy, node_label, node_taint, on_failure, verify, cni, census)`},
		{name: "unknown nested key", file: "legacy_triggers:\n  pci: [1b4b:9235]\n",
			want: f + `: unknown key "legacy_triggers.pci" (valid keys under legacy_triggers: modules, pci_ids, dmi, device_tree)`},
		{name: "duplicate key", file: "backend: auto\nbackend: off\n",
			want: f + `: key "backend" is set twice (lines 1 and 2): keep one`},
		{name: "backend modern", file: "backend: modern\n",
			want: f + `: backend: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)`},
		{name: "backend legacy", file: "backend: legacy\n",
			want: f + `: backend: "legacy" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables ("legacy" is the IPTABLES_MODE value; the backend is called iptables-legacy)`},
		{name: "backend nft", file: "backend: nft\n",
			want: f + `: backend: "nft" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables ("nft" is the IPTABLES_MODE value; use iptables-nft for iptables over nf_tables, or nftables for kube-proxy's native nftables mode)`},
		{name: "backend list", file: "backend: [iptables-nft]\n",
			want: f + `: backend: must be a single value, not a list`},
		{name: "prefer auto", file: "prefer: [auto]\n",
			want: f + `: prefer: item 1: "auto" is not a backend: use iptables-legacy, iptables-nft or nftables`},
		{name: "prefer twice", file: "prefer: [iptables-nft, iptables-nft]\n",
			want: f + `: prefer: "iptables-nft" is listed twice: list each backend once`},
		{name: "prefer empty", file: "prefer: []\n",
			want: f + `: prefer: the list is empty: list at least one backend, e.g. [iptables-nft, iptables-legacy]`},
		{name: "prefer scalar", file: "prefer: iptables-nft\n",
			want: f + `: prefer: must be a list such as [a, b], not the value "iptables-nft"`},
		{name: "pci id", file: "legacy_triggers:\n  pci_ids: [\"1b4b-9235\"]\n",
			want: f + `: legacy_triggers.pci_ids: item 1: "1b4b-9235" is not a PCI id: use "vendor:device" in hex as lspci -n prints it, e.g. "1b4b:9235"`},
		{name: "bad glob", file: "legacy_triggers:\n  dmi: [\"Syno[logy\"]\n",
			want: f + `: legacy_triggers.dmi: item 1: "Syno[logy" is not a valid glob (use *, ? and [...] as in shell patterns): syntax error in pattern`},
		{name: "module path", file: "legacy_triggers:\n  modules: [/lib/modules/x.ko]\n",
			want: f + `: legacy_triggers.modules: item 1: "/lib/modules/x.ko" is a path: give a module or driver name such as "ahci" or "mv_*"`},
		{name: "backend mapping", file: "backend:\n  name: nftables\n",
			want: f + `: backend: must be a single value, not a mapping`},
		{name: "section alias", file: "kube_proxy: &k\n  extra_args: [a=1]\nverify: *k\n",
			want: f + `: verify: must hold keys (wait, textfile_dir, node_feature_file, node_condition), not an alias`},
		{name: "list item empty", file: "prefer: [iptables-nft, ~]\n",
			want: f + `: prefer: item 2 must be a single value, not an empty value`},
		{name: "section scalar", file: "verify: 5m\n",
			want: f + `: verify: must hold keys (wait, textfile_dir, node_feature_file, node_condition), not the value "5m"`},
		{name: "extra arg no value", file: "kube_proxy:\n  extra_args: [masquerade-all]\n",
			want: f + `: kube_proxy.extra_args: item 1: "masquerade-all" is not flag=value: write kube-proxy flags like "iptables-min-sync-period=1s" (lower-case name, =, value)`},
		{name: "extra arg proxy-mode", file: "kube_proxy:\n  extra_args: [proxy-mode=ipvs]\n",
			want: f + `: kube_proxy.extra_args: item 1: "proxy-mode=ipvs" cannot be set here: rke2-proxy-backend sets proxy-mode from the decision; choose the backend with backend: instead`},
		{name: "extra arg gate", file: "kube_proxy:\n  extra_args: [\"feature-gates=NFTablesProxyMode=true\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "feature-gates=NFTablesProxyMode=true" cannot be set here: rke2-proxy-backend adds NFTablesProxyMode=true itself, only on Kubernetes 1.29-1.30 where the gate exists (passing it to a version that removed it, or in another letter case, stops kube-proxy)`},
		{name: "extra arg gate lower case", file: "kube_proxy:\n  extra_args: [\"feature-gates=nftablesproxymode=true\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "feature-gates=nftablesproxymode=true" cannot be set here: rke2-proxy-backend adds NFTablesProxyMode=true itself, only on Kubernetes 1.29-1.30 where the gate exists (passing it to a version that removed it, or in another letter case, stops kube-proxy)`},
		{name: "extra arg gate among others", file: "kube_proxy:\n  extra_args: [\"feature-gates=Foo=true,NFTABLESPROXYMODE=false\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "feature-gates=Foo=true,NFTABLESPROXYMODE=false" cannot be set here: rke2-proxy-backend adds NFTablesProxyMode=true itself, only on Kubernetes 1.29-1.30 where the gate exists (passing it to a version that removed it, or in another letter case, stops kube-proxy)`},
		{name: "extra arg newline", file: "kube_proxy:\n  extra_args: [\"a=1\\nb=2\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "a=1\nb=2" contains the control or invalid character U+000A at byte 3 (newline, tab, DEL, ...); remove it`},
		{name: "extra arg tab", file: "kube_proxy:\n  extra_args: [\"v=\\t2\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "v=\t2" contains the control or invalid character U+0009 at byte 2 (newline, tab, DEL, ...); remove it`},
		{name: "extra arg DEL", file: "kube_proxy:\n  extra_args: [\"v=2\\x7f\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "v=2\x7f" contains the control or invalid character U+007F at byte 3 (newline, tab, DEL, ...); remove it`},
		{name: "extra arg NEL", file: "kube_proxy:\n  extra_args: [\"v=2\\N\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "v=2\u0085" contains the control or invalid character U+0085 at byte 3 (newline, tab, DEL, ...); remove it`},
		{name: "extra arg replacement char", file: "kube_proxy:\n  extra_args: [\"v=\uFFFD\"]\n",
			want: f + `: kube_proxy.extra_args: item 1: "v=�" contains the control or invalid character U+FFFD at byte 2 (newline, tab, DEL, ...); remove it`},
		{name: "bool", file: "node_label: maybe\n",
			want: f + `: node_label: "maybe" is not a boolean: use true or false`},
		{name: "node_taint effect", file: "node_taint: rke2-proxy-backend/backend=iptables-legacy:Never\n",
			want: f + `: node_taint: "rke2-proxy-backend/backend=iptables-legacy:Never" effect "Never" is not one of NoSchedule, PreferNoSchedule, NoExecute`},
		{name: "node_taint key", file: "node_taint: dedicated=iptables-legacy:NoSchedule\n",
			want: f + `: node_taint: "dedicated=iptables-legacy:NoSchedule": the key must be rke2-proxy-backend/backend, so that the taint says which backend the node runs (e.g. rke2-proxy-backend/backend=iptables-legacy:NoSchedule)`},
		{name: "node_taint value", file: "node_taint: rke2-proxy-backend/backend=legacy:NoSchedule\n",
			want: f + `: node_taint: "rke2-proxy-backend/backend=legacy:NoSchedule": the value must be the backend whose nodes get the taint: "legacy" is not a backend: use iptables-legacy, iptables-nft or nftables ("legacy" is the IPTABLES_MODE value; the backend is called iptables-legacy)`},
		{name: "node_taint no effect", file: "node_taint: rke2-proxy-backend/backend=nftables\n",
			want: f + `: node_taint: "rke2-proxy-backend/backend=nftables" is not of the form key=value:Effect, e.g. rke2-proxy-backend/backend=iptables-legacy:NoSchedule`},
		{name: "on_failure", file: "on_failure: fail\n",
			want: f + `: on_failure: "fail" is not valid: use warn (RKE2 starts anyway) or block (RKE2 does not start)`},
		{name: "duration without unit", file: "verify:\n  wait: 300\n",
			want: f + `: verify.wait: "300" is not a duration: use a number with a unit, e.g. 5m, 90s or 0s (do not wait)`},
		{name: "negative duration", file: "verify:\n  wait: -1s\n",
			want: f + `: verify.wait: "-1s" is out of range: use 0s to 24h`},
		{name: "census under its floor", file: "census:\n  interval: 1m\n",
			want: f + `: census.interval: "1m" is out of range: use 0s (no census) or 10m0s to 24h`},
		{name: "census without unit", file: "census:\n  interval: 3600\n",
			want: f + `: census.interval: "3600" is not a duration: use a number with a unit, e.g. 1h, or 0s (no census)`},
		{name: "relative textfile dir", file: "verify:\n  textfile_dir: metrics\n",
			want: f + `: verify.textfile_dir: "metrics" is not an absolute path: use e.g. /var/lib/prometheus/node-exporter, or "" to write no metrics`},
		{name: "env backend modern", env: []string{"RKE2_PROXY_BACKEND=modern"},
			want: `environment variable RKE2_PROXY_BACKEND: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)`},
		{name: "env unknown", env: []string{"RKE2_PROXY_BACKEND_ONFAILURE=block"},
			want: `environment variable RKE2_PROXY_BACKEND_ONFAILURE is not a setting of rke2-proxy-backend (valid: RKE2_PROXY_BACKEND, RKE2_PROXY_BACKEND_PREFER, RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_MODULES, RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_PCI_IDS, RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_DMI, RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_DEVICE_TREE, RKE2_PROXY_BACKEND_RESPECT_RKE2_CONFIG, RKE2_PROXY_BACKEND_KUBE_PROXY_EXTRA_ARGS, RKE2_PROXY_BACKEND_NODE_LABEL, RKE2_PROXY_BACKEND_NODE_TAINT, RKE2_PROXY_BACKEND_ON_FAILURE, RKE2_PROXY_BACKEND_VERIFY_WAIT, RKE2_PROXY_BACKEND_VERIFY_TEXTFILE_DIR, RKE2_PROXY_BACKEND_VERIFY_NODE_FEATURE_FILE, RKE2_PROXY_BACKEND_VERIFY_NODE_CONDITION, RKE2_PROXY_BACKEND_CNI_HELMCHARTCONFIG, RKE2_PROXY_BACKEND_CENSUS_INTERVAL, and RKE2_PROXY_BACKEND_ROOT for --root)`},
		{name: "env bool", env: []string{"RKE2_PROXY_BACKEND_NODE_LABEL=sometimes"},
			want: `environment variable RKE2_PROXY_BACKEND_NODE_LABEL: "sometimes" is not a boolean: use true or false`},
		{name: "env prefer", env: []string{"RKE2_PROXY_BACKEND_PREFER=iptables-nft,legacy"},
			want: `environment variable RKE2_PROXY_BACKEND_PREFER: item 2: "legacy" is not a backend: use iptables-legacy, iptables-nft or nftables ("legacy" is the IPTABLES_MODE value; the backend is called iptables-legacy)`},
		{name: "cmdline garbage", cmdline: []string{"ro", "rke2.proxy_backend=modern"},
			want: `/proc/cmdline: rke2.proxy_backend=modern: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)`},
		{name: "cmdline no value", cmdline: []string{"rke2.proxy_backend"},
			want: `/proc/cmdline: "rke2.proxy_backend" needs a value: use rke2.proxy_backend=auto, off, iptables-legacy, iptables-nft or nftables`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var file *string
			if tt.file != "" {
				file = &tt.file
			}
			_, err := Load(rootWith(t, file), hostfs.ConfigFile, tt.env, tt.cmdline)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

// TestUnreadableFile puts a directory where the file should be: a read
// error that is not "missing" must fail, not fall back to defaults.
func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, hostfs.ConfigFile), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(hostfs.New(dir), hostfs.ConfigFile, nil, nil)
	want := f + ": cannot read the config file: read " + filepath.Join(dir, hostfs.ConfigFile) + ": is a directory (fix its permissions or remove it to use the defaults)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}
