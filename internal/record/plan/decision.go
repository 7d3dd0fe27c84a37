package plan

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"

// Decision is what the node should run and what to tell RKE2: what
// decide.Decide returns and the "decision" object of plan.json.
type Decision struct {
	// Disabled is true when there is nothing to do: the operator turned the
	// tool off (backend: off), RKE2 runs no kube-proxy (disable-kube-proxy),
	// or RKE2's config pins a proxy mode the tool does not manage.
	// Nothing is written then, Backend is empty and Reasons say which.
	Disabled bool            `json:"disabled,omitempty"`
	Backend  backend.Backend `json:"backend"`
	// ProxyMode and IptablesMode are kube-proxy's --proxy-mode and the
	// IPTABLES_MODE for RKE2's kube-proxy image. ProxyMode is ipvs when
	// RKE2's config sets proxy-mode=ipvs: the drop-in keeps that mode and
	// Backend is the iptables backend under it.
	ProxyMode    string `json:"proxy_mode"`
	IptablesMode string `json:"iptables_mode"`
	// IPVSScheduler is kube-proxy's --ipvs-scheduler in ipvs mode (rr when
	// unset), whose ip_vs_<name> module apply loads; empty in other modes.
	IPVSScheduler string `json:"ipvs_scheduler,omitempty"`
	// Source is auto, config, env, cmdline or rke2-config.
	Source string `json:"source"`
	// Modules are the kernel modules apply loads (the backend's set only).
	Modules []string `json:"modules"`
	// KubeProxyArgs and KubeProxyEnv are what apply writes as
	// kube-proxy-arg+ and kube-proxy-extra-env+. They leave out anything the
	// operator already pinned in RKE2's config (see Respected).
	KubeProxyArgs []string `json:"kube_proxy_args"`
	KubeProxyEnv  []string `json:"kube_proxy_env"`
	// NodeLabels are node-label+ entries (empty when node_label is off).
	NodeLabels []string `json:"node_labels,omitempty"`
	// NodeTaints are node-taint+ entries: node_taint when it names this backend.
	NodeTaints []string `json:"node_taints,omitempty"`
	// Respected names RKE2 settings the operator set explicitly that the
	// decision keeps (e.g. "proxy-mode=nftables in /etc/rancher/rke2/config.yaml").
	Respected []string `json:"respected,omitempty"`
	// Refused lists overrides the host cannot run, with why.
	Refused []string `json:"refused,omitempty"`
	// Reasons explain the decision in order, one plain sentence each.
	Reasons []string `json:"reasons"`
}
