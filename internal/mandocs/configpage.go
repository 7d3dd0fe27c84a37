package mandocs

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// keyText explains each config key. Names, types, defaults and variables
// come from config.Keys(), the table the loader checks against;
// TestConfigPageCoversEveryKey fails when a key is added or dropped there
// and not here.
var keyText = map[string]string{
	"backend":                     `Which netfilter backend kube-proxy uses: auto (decide at every boot from the host), iptables-legacy, iptables-nft, nftables, or off (do nothing: RKE2 runs with its own defaults). A backend the host cannot run is refused with a reason, and auto decides instead.`,
	"prefer":                      `Auto's tie-break when the host can run several backends and neither live rules, legacy triggers, the kernel nor the host's iptables alternative decided. Backend names; nftables is picked only when listed first (RKE2 calls it experimental, and the CNI must be switched too). cheapest, allowed only as the first entry, opts in to picking the backend rke2-proxy-backend bench measured cheapest at the last recorded size (with hysteresis; live rules and every pin still win); the backends after it decide when nothing current was measured.`,
	"legacy_triggers.modules":     `Loaded module or bound driver names; any match forces iptables-legacy (NAS kernels whose nf_tables is missing or broken). Shell globs allowed; "-" and "_" are the same, as for the kernel.`,
	"legacy_triggers.pci_ids":     `PCI ids "vendor:device" in hex, as lspci -n prints them (e.g. "1b4b:9235"); any present device forces iptables-legacy.`,
	"legacy_triggers.dmi":         `Globs matched against /sys/class/dmi/id/sys_vendor and product_name (e.g. "Synology*"); any match forces iptables-legacy.`,
	"legacy_triggers.device_tree": `Globs matched against the device tree's /proc/device-tree/model and each entry of /proc/device-tree/compatible (e.g. "synology,*", or "synology,ds418" as mainline Linux names that arm64 DiskStation); any match forces iptables-legacy. For machines that boot from a device tree instead of DMI, as arm64 NAS boxes do; no vendor's names are shipped, since only a node's own files say which it has. In the environment the items are separated by spaces, because device-tree names contain commas.`,
	"respect_rke2_config":         `When RKE2's own config already sets proxy-mode= (kube-proxy-arg) or IPTABLES_MODE= (kube-proxy-extra-env), keep it and add nothing that contradicts it. false: auto decides and the drop-in overrides those settings.`,
	"kube_proxy.extra_args":       `More kube-proxy flags as "flag=value" without the leading "--", e.g. "iptables-min-sync-period=1s". proxy-mode and the NFTablesProxyMode feature gate are set by rke2-proxy-backend and refused here. In the environment the items are separated by spaces, because kube-proxy values contain commas.`,
	"node_label":                  `Add the node label rke2-proxy-backend/backend=<backend>, so that kubectl get nodes -L rke2-proxy-backend/backend shows each node's choice.`,
	"node_taint":                  `Register the node with this taint when it chooses the backend the taint names: "" (none) or rke2-proxy-backend/backend=<backend>:<effect>, the effect one of NoSchedule, PreferNoSchedule or NoExecute. Nodes on other backends get no taint, so one config can serve a whole pool. kubelet applies taints only when it first registers the node: remove a stale one with kubectl taint node <node> rke2-proxy-backend/backend-.`,
	"on_failure":                  `What happens when apply (before RKE2 starts) cannot honour the plan, e.g. a module does not load: warn logs it and lets RKE2 start on its own defaults; block stops RKE2 from starting.`,
	"verify.wait":                 `How long the post-start check waits for kube-proxy's first sync: a duration such as 90s or 5m, from 0s (check once) to 24h. It becomes verify's --wait in the generated drop-in of the verify unit.`,
	"cni.helmchartconfig":         `What to do about the CNI when kube-proxy runs nftables: print (the default) only shows, in detect, the HelmChartConfig that switches RKE2's CNI chart (rke2-canal, rke2-calico, rke2-flannel) to nftables; write has apply write it, one file per chart, into RKE2's server manifests directory on servers, atomically and never over a HelmChartConfig you wrote. The setting is cluster-wide: every node's kube-proxy must then run nftables.`,
	"verify.textfile_dir":         `Where verify writes Prometheus textfile metrics for node-exporter's textfile collector: an absolute path, or "" to write none.`,

	// Its own block: gofmt does not realign the keys above for it.
	"verify.node_feature_file": `Publish this node's backend, proxy mode, verify verdict and kernel capabilities as node-feature-discovery labels (feature.node.kubernetes.io/rke2-proxy-backend.*) in /etc/kubernetes/node-feature-discovery/features.d/rke2-proxy-backend, when that directory exists (nfd-worker's default). Each verify renews the file and its expiry; a run without a result, or false here, removes it.`,
	"census.interval":          `How often the watch service takes the legacy-xtables census (rke2-proxy-backend census): 0s (the default) never; otherwise 10m to 24h. Each round enters up to 256 network namespaces read-only and writes the rke2_proxy_backend_census.prom textfile and, with verify.node_condition, the rke2-proxy-backend/legacy-free annotation at watch's next Node update.`,
	"verify.node_condition":    `Publish the result on this node's own Node object: the condition RKE2ProxyBackendProblem (check's verdict and words) and the rke2-proxy-backend/* annotations, written by watch (and by verify when no watch runs) with the node's kubelet credentials from RKE2's agent directory. An API server that cannot be reached is a journal note, never a failure. false writes nothing to the cluster.`,
}

// configExample is the page's EXAMPLE; a test loads it, so it stays valid.
const configExample = `
backend: auto
legacy_triggers:
  dmi: ["Synology*", "QNAP*"]
  pci_ids: ["1b4b:9235"]
  device_tree: ["synology,*", "qnap,*"]
kube_proxy:
  extra_args: ["iptables-min-sync-period=1s"]
on_failure: block
verify:
  wait: 10m
`

func configPage(h header) string {
	var r roff
	r.th(strings.ToUpper(ConfigPage), "5", h.date, h.source, h.manual)
	r.sh("NAME")
	r.line(escape(ConfigPage) + ` \- the operator config of rke2\-proxy\-backend`)
	r.sh("SYNOPSIS")
	r.line(italic(hostfs.ConfigFile))
	r.sh("DESCRIPTION")
	r.prose(`rke2-proxy-backend reads this YAML file at every boot (generator), before RKE2 starts (apply) and after (verify). Every key is optional: a missing file, or a missing key, means the defaults below, and the file as shipped is those defaults with comments. A file named with --config must exist.

Loading is strict. An unknown key, a key in the wrong case, a value of the wrong type or an invalid value is an error that names the file, the key and the value and lists the valid ones; rke2-proxy-backend then exits 2. In a config-management pipeline, run "rke2-proxy-backend lint FILE" before a push: it checks the file as a node reads it and prints FILE:LINE: and the message, exit 2 when refused. Run "rke2-proxy-backend detect" on a node after an edit to see the decision and its reasons.

A dotted name below is a nested key: verify.wait is written as
  verify:
    wait: 5m`)

	r.sh("KEYS")
	for _, k := range config.Keys() {
		term := bold(k.Path) + " (" + escape(k.Type) + ", default " + bold(k.Default) + ")"
		text := escape(keyText[k.Path]) + "\n.br\n" + escape("Environment: "+k.Env+".")
		r.item(term, text)
	}

	r.sh("OVERRIDES")
	r.para("Highest first:")
	for i, o := range []string{
		"The kernel command line: " + config.CmdlineKey + "=B (auto, off or a backend), for one boot.",
		"The environment: " + config.EnvBackend + "=B, and " + config.EnvBackend + "_<KEY> for the other keys (see ENVIRONMENT). An empty variable counts as unset. Lists are separated by commas, except kube_proxy.extra_args and legacy_triggers.device_tree (spaces).",
		"This file.",
		"Auto-detection.",
	} {
		r.item(fmt.Sprintf("%d.", i+1), escape(o))
	}

	r.sh("ENVIRONMENT")
	for _, k := range config.Keys() {
		r.item(bold(k.Env), escape("Overrides "+k.Path+"."))
	}

	r.sh("EXAMPLE")
	r.prose("A NAS fleet whose kernels have no working nf_tables, with a faster resync and RKE2 kept from starting when the backend cannot be honoured:")
	r.literal(strings.Split(strings.TrimSpace(configExample), "\n"))

	r.sh("FILES")
	r.item(pathTerm(hostfs.ConfigFile), escape("This file; the package creates it from /usr/share/rke2-proxy-backend/config.yaml.example only when there is none, and no upgrade changes it."))

	r.sh("SEE ALSO")
	r.line(strings.Join([]string{ref("rke2-proxy-backend", "1"), ref("rke2-proxy-backend-detect", "1"), ref("rke2-proxy-backend-lint", "1"), ref("rke2-proxy-backend-apply", "1"), ref("rke2-proxy-backend-verify", "1")}, ",\n"))
	return r.String()
}
