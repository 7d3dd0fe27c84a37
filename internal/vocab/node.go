package vocab

import "time"

// The names this tool writes on its own Node object (internal/proof)
// and the fleet view reads back (internal/fleetview, kubectl proxy-backend):
// one definition, so the writer and the reader cannot drift apart.

// NodeConditionType is the Node condition the tool writes. It is not
// node-problem-detector's KubeProxyBackendProblem (set from `check`): two
// writers of one condition would overwrite each other.
const NodeConditionType = "RKE2ProxyBackendProblem"

// NodeKeyPrefix is the tool's own key namespace, the one its node label
// uses: kubernetes.io and k8s.io are Kubernetes', and rke2.io or cattle.io
// would claim to be RKE2's or Rancher's word.
const NodeKeyPrefix = "rke2-proxy-backend/"

// NodeLabelPlanned is the node label apply registers the node with: the
// planned backend.
const NodeLabelPlanned = NodeKeyPrefix + "backend"

// The annotations the verified result is published as.
const (
	// NodeAnnotationVerifiedBackend is the backend the last verify proved,
	// or "none" while it proves none.
	NodeAnnotationVerifiedBackend = NodeKeyPrefix + "verified-backend"
	// NodeAnnotationMode is kube-proxy's proxy mode (iptables, nftables, ipvs).
	NodeAnnotationMode = NodeKeyPrefix + "mode"
	// NodeAnnotationVersion is this tool's version.
	NodeAnnotationVersion = NodeKeyPrefix + "version"
	// NodeAnnotationDecisionSource is where the plan's backend came from
	// (auto, config, env, cmdline, rke2-config).
	NodeAnnotationDecisionSource = NodeKeyPrefix + "decision-source"
	// NodeAnnotationVerifiedAt is the last proof, RFC 3339 in UTC ("" before
	// the first one).
	NodeAnnotationVerifiedAt = NodeKeyPrefix + "verified-at"
)

// NodeAnnotationStaleAfter is how long the node's condition stands after
// its lastHeartbeatTime (a Go duration, e.g. "30m0s"), as a Lease's
// leaseDurationSeconds says how long its renewTime holds: the writer
// renews the heartbeat well within it (watch: three of its full-verify
// periods), so a heartbeat older than this is a node that stopped proving
// itself, and readers call its condition Unknown.
const NodeAnnotationStaleAfter = NodeKeyPrefix + "stale-after"

// NodeAnnotationK8s138 says whether the node keeps its backend when
// kube-proxy reaches 1.38, which picks its iptables flavour by kubelet's
// hint chains: "would-pick=iptables-legacy; applied=iptables-nft; moves",
// "...; stays", "not-affected; applied=nftables" or "unknown; why"
// (docs/kubernetes-1.38.md).
const NodeAnnotationK8s138 = NodeKeyPrefix + "k8s-1.38"

// NodeAnnotationIptablesModeDecides says whether the IPTABLES_MODE given
// to kube-proxy picks its iptables flavour on the Kubernetes version the
// node runs: "yes" (before 1.38), "no" (1.38+, which picks by kubelet's
// hint chains), "unknown" or "not-affected" (nftables mode). It is a key
// of its own, not a field of NodeAnnotationK8s138's value, so that the
// fleet views that read that value strictly keep reading it.
const NodeAnnotationIptablesModeDecides = NodeKeyPrefix + "iptables-mode-decides"

// NodeStaleAfterMax is what readers take when a node gives no
// stale-after (an older writer, or a value that does not parse) and the
// most they honour: a node verified only at RKE2 starts (no watch) says
// 24h, as long as its node-feature-discovery labels last.
const NodeStaleAfterMax = 24 * time.Hour

// NodeAnnotationLegacyFree is the node's last census (watch, when
// census.interval asks): "yes" when no network namespace holds legacy
// xtables rules, "no; namespaces=N; host; pods=UID,..." naming what holds
// it back, or "unknown; why" (docs/census.md). Absent while no census ran.
const NodeAnnotationLegacyFree = NodeKeyPrefix + "legacy-free"
