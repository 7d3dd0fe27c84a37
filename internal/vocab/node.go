package vocab

// The names this tool writes on its own Node object (internal/clusterpublish)
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

// The node label apply registers the node with, and the annotations the
// verified result is published as.
const (
	NodeLabelPlanned              = NodeKeyPrefix + "backend"
	NodeAnnotationVerifiedBackend = NodeKeyPrefix + "verified-backend"
	NodeAnnotationMode            = NodeKeyPrefix + "mode"
	NodeAnnotationVersion         = NodeKeyPrefix + "version"
	NodeAnnotationDecisionSource  = NodeKeyPrefix + "decision-source"
	NodeAnnotationVerifiedAt      = NodeKeyPrefix + "verified-at"
)
