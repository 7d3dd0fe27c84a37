package clusterpublish

import (
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nodecheck"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// ConditionType is the Node condition this tool writes. It is not
// KubeProxyBackendProblem, the condition node-problem-detector sets from
// `rke2-proxy-backend check` (packaging/monitoring): two writers of one
// condition would overwrite each other's heartbeat and message, so each
// writer owns its own type, and a fleet with NPD sees both, saying the
// same (both judge with nodecheck).
const ConditionType = vocab.NodeConditionType

// The condition's reasons, one per check status.
const (
	ReasonVerified   = "KubeProxyRulesVerified" // False: check is ok
	ReasonWrong      = "KubeProxyRulesWrong"    // True: check found a problem
	ReasonCannotTell = "CannotTell"             // Unknown
)

// AnnotationPrefix is the tool's own key namespace, the one its node
// label (rke2-proxy-backend/backend) already uses: kubernetes.io and
// k8s.io are reserved for Kubernetes itself, and rke2.io or cattle.io
// would claim to be RKE2's or Rancher's word, which this tool is not.
const AnnotationPrefix = vocab.NodeKeyPrefix

// The annotations, read by the fleet view.
const (
	// AnnotationVerifiedBackend is the backend the last verify proved,
	// or "none" while it proves none.
	AnnotationVerifiedBackend = AnnotationPrefix + "verified-backend"
	// AnnotationMode is kube-proxy's proxy mode (iptables, nftables, ipvs).
	AnnotationMode = AnnotationPrefix + "mode"
	// AnnotationVersion is this tool's version.
	AnnotationVersion = AnnotationPrefix + "version"
	// AnnotationDecisionSource is where the plan's backend came from
	// (auto, config, env, cmdline, rke2-config).
	AnnotationDecisionSource = AnnotationPrefix + "decision-source"
	// AnnotationVerifiedAt is the last proof, RFC 3339 in UTC ("" before
	// the first one).
	AnnotationVerifiedAt = AnnotationPrefix + "verified-at"
)

// State is what one verify run says about the node.
type State struct {
	Verdict nodecheck.Verdict
	// Proven is set when this run proved Backend (check says ok and
	// verify verified a backend), At is when.
	Proven  bool
	At      time.Time
	Backend string
	Mode    string
	Source  string
	Version string
}

// StateOf is the state after res was stored under root: the verdict is
// check's on the status verify just wrote, in check's words, so the
// condition and node-problem-detector's never tell different stories.
func StateOf(root hostfs.Root, res *verify.Result, at time.Time) State {
	s := State{Verdict: nodecheck.Check(root, nodecheck.Options{Now: at}), At: at, Version: version.Version}
	if p, err := plan.Read(root); err == nil {
		s.Mode, s.Source = p.Decision.ProxyMode, p.Decision.Source
	}
	if res != nil {
		if res.ProxyMode != "" {
			s.Mode = res.ProxyMode // what kube-proxy said it runs
		}
		s.Proven = res.OK && res.Verdict == verify.VerdictOK && s.Verdict.Status == nodecheck.OK && res.Expect != ""
		if s.Proven {
			s.Backend = string(res.Expect)
		}
	}
	return s
}

// same says a and b publish the same facts, their times aside: only a
// change of these is worth a write before the rate limit allows one.
func same(a, b State) bool {
	return a.Verdict == b.Verdict && a.Proven == b.Proven && a.Backend == b.Backend &&
		a.Mode == b.Mode && a.Source == b.Source && a.Version == b.Version
}

func conditionOf(v nodecheck.Verdict) (status, reason string) {
	switch v.Status {
	case nodecheck.OK:
		return "False", ReasonVerified
	case nodecheck.Problem:
		return "True", ReasonWrong
	}
	return "Unknown", ReasonCannotTell
}
