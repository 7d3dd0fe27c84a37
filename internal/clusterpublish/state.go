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

// The annotations the verdict is published as: internal/vocab names them
// once, for this writer and for the fleet view that reads them.
const (
	AnnotationVerifiedBackend = vocab.NodeAnnotationVerifiedBackend
	AnnotationMode            = vocab.NodeAnnotationMode
	AnnotationVersion         = vocab.NodeAnnotationVersion
	AnnotationDecisionSource  = vocab.NodeAnnotationDecisionSource
	AnnotationVerifiedAt      = vocab.NodeAnnotationVerifiedAt
	AnnotationStaleAfter      = vocab.NodeAnnotationStaleAfter
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
	// The mode and source of what RKE2 was given, never of a plan apply
	// could not carry out (check's verdict says that one is unknown).
	if p, err := plan.Read(root); err == nil {
		switch {
		case p.Carried():
			s.Mode, s.Source = p.Applied.ProxyMode, p.Decision.Source
		case p.AppliedBackend() != "":
			s.Mode = p.Applied.ProxyMode // an earlier run's drop-in: who decided it is not recorded
		}
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
