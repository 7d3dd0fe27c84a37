// Package config loads the operator's configuration: the file
// /etc/rke2-proxy-backend/config.yaml, then RKE2_PROXY_BACKEND* environment
// variables, then the kernel command line (rke2.proxy_backend=), highest
// last. Loading is strict: an unknown key or a bad value is an error naming
// the file, the key and the value, with the valid choices.
//
// DESIGN: no viper. The loader once went through viper, but used it only as
// a map (SetDefault, Set, Get): every source is read by hand, because the
// contract is not viper's. Viper folds key case and reads unknown keys
// without complaint, while this file must refuse both and name the line;
// its environment binding would split every list on spaces, where only
// kube_proxy.extra_args is space-separated and the other lists take commas,
// and it would not treat Environment=X= as unset; the kernel command line
// is not a viper source at all. Layering validated values over defaults is
// a loop over a map (assemble). Keeping viper for that made the generator,
// which runs on every boot and daemon-reload, pay for its dependencies'
// package init and page faults (gotenv, fsnotify, afero with net/http, cast
// with html/template): 12 fewer packages with init work and about a third
// less init time without it (GODEBUG=inittrace=1), issue 9 item 21.
package config

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Backend choices besides the three backend names.
const (
	Auto = "auto"
	Off  = "off"
)

// Sources of the backend setting, as reported in decisions.
const (
	SourceAuto    = "auto"
	SourceConfig  = "config"
	SourceEnv     = "env"
	SourceCmdline = "cmdline"
)

// Config is the operator's configuration after defaults and overrides.
type Config struct {
	// Backend is auto, off or a backend name; BackendSource says which layer
	// set it (auto when nothing did).
	Backend       string `json:"backend"`
	BackendSource string `json:"backend_source"`
	// Prefer is auto's tie-break order.
	Prefer            []backend.Backend `json:"prefer"`
	LegacyTriggers    LegacyTriggers    `json:"legacy_triggers"`
	RespectRKE2Config bool              `json:"respect_rke2_config"`
	KubeProxy         KubeProxy         `json:"kube_proxy"`
	NodeLabel         bool              `json:"node_label"`
	// NodeTaint is "" or TaintKey=<backend>:<Effect>: nodes that choose
	// that backend register with the taint.
	NodeTaint string `json:"node_taint,omitempty"`
	OnFailure string `json:"on_failure"` // warn | block
	Verify    Verify `json:"verify"`
	CNI       CNI    `json:"cni"`
	Census    Census `json:"census"`
	// File is the config file that was read ("" when none existed).
	File string `json:"file,omitempty"`
}

// LegacyTriggers force iptables-legacy when any of them matches (NAS kernels
// whose nf_tables is missing or broken).
type LegacyTriggers struct {
	Modules []string `json:"modules"` // module or driver names, globs allowed
	PCIIDs  []string `json:"pci_ids"` // "vendor:device" in hex
	DMI     []string `json:"dmi"`     // globs on sys_vendor and product_name
	// DeviceTree are globs on the device tree's model and each of its
	// compatible strings: arm64 NAS boxes boot from a device tree, not DMI.
	DeviceTree []string `json:"device_tree"`
}

// KubeProxy holds extra kube-proxy settings to pass through RKE2.
type KubeProxy struct {
	ExtraArgs []string `json:"extra_args"` // flag=value, no leading --
}

// Verify configures the post-start check.
type Verify struct {
	Wait        Duration `json:"wait"`
	TextfileDir string   `json:"textfile_dir"`
	// NodeFeatureFile lets verify and watch publish node-feature-discovery
	// labels (hostfs.NFDFeatureFile) when NFD's directory exists.
	NodeFeatureFile bool `json:"node_feature_file"`
	// NodeCondition: watch (and verify, when watch is off) publishes the
	// verdict on the node's own Node object, as a condition and
	// annotations, with the node's kubelet credentials.
	NodeCondition bool `json:"node_condition"`
}

// Census configures watch's periodic legacy-xtables census.
type Census struct {
	// Interval is how often watch takes one (0: never, the default; at
	// least CensusIntervalFloor).
	Interval Duration `json:"interval"`
}

// OnFailure policies.
const (
	OnFailureWarn  = "warn"
	OnFailureBlock = "block"
)

// CNI says what to do about the CNI when kube-proxy runs nftables.
type CNI struct {
	// HelmChartConfig is print (detect shows the CNI chart's
	// HelmChartConfig to apply) or write (apply writes it into RKE2's
	// server manifests directory on servers, never over the operator's).
	HelmChartConfig string `json:"helmchartconfig"`
}

// cni.helmchartconfig choices.
const (
	CNIPrint = "print"
	CNIWrite = "write"
)
