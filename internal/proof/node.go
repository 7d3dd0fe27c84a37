package proof

import (
	"encoding/json"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// The Node condition and annotations: the run's verdict on the node's own
// Node object, so `kubectl get nodes` shows the proven backend without
// node-problem-detector; the Publisher sends the bodies built here.

// ConditionType is the Node condition this tool writes. It is not
// KubeProxyBackendProblem, the condition node-problem-detector sets from
// `rke2-proxy-backend check` (packaging/monitoring): two writers of one
// condition would overwrite each other's heartbeat and message, so each
// writer owns its own type, and a fleet with NPD sees both, saying the
// same (both take check's verdict).
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
	AnnotationK8s138          = vocab.NodeAnnotationK8s138
	AnnotationIptablesMode    = vocab.NodeAnnotationIptablesModeDecides
)

// same says a and b publish the same facts, their times aside: only a
// change of these is worth a write before the rate limit allows one.
func same(a, b State) bool {
	return a.Verdict == b.Verdict && a.Proven == b.Proven && a.Backend == b.Backend &&
		a.Mode == b.Mode && a.Source == b.Source && a.Version == b.Version && a.K138 == b.K138 && a.LegacyFree == b.LegacyFree
}

func conditionOf(v Verdict) (status, reason string) {
	switch v.Status {
	case OK:
		return "False", ReasonVerified
	case Problem:
		return "True", ReasonWrong
	}
	return "Unknown", ReasonCannotTell
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastHeartbeatTime  string `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// conditionPatch is the strategic-merge patch of nodes/NAME/status that
// sets s's condition (conditions merge by type, so the kubelet's stay).
func conditionPatch(s State, transition time.Time) ([]byte, error) {
	status, reason := conditionOf(s.Verdict)
	c := condition{Type: ConditionType, Status: status, Reason: reason, Message: s.Verdict.Message,
		LastHeartbeatTime: stamp(s.At), LastTransitionTime: stamp(transition)}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": []condition{c}}})
}

// annotationPatch is the merge patch of nodes/NAME that sets s's
// annotations: the backend last proven at lastProof, how long readers
// may trust the condition's heartbeat.
func annotationPatch(s State, lastProof time.Time, staleAfter time.Duration) ([]byte, error) {
	backend := s.Backend
	if !s.Proven {
		backend = "none"
	}
	a := map[string]string{
		AnnotationVerifiedBackend: backend,
		AnnotationMode:            s.Mode,
		AnnotationVersion:         s.Version,
		AnnotationDecisionSource:  s.Source,
		AnnotationStaleAfter:      staleAfter.String(),
		AnnotationK8s138:          s.K138.Value(),
		AnnotationIptablesMode:    s.K138.IptablesMode,
	}
	// No proof since this publisher started (WriteOnce, a restarted
	// watch): the key is left out of the merge patch, so the Node keeps
	// the last proof an earlier run wrote instead of losing it to one
	// failed run.
	if !lastProof.IsZero() {
		a[AnnotationVerifiedAt] = stamp(lastProof)
	}
	if s.LegacyFree != "" {
		a[AnnotationLegacyFree] = s.LegacyFree
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": a}})
}

// conditionIn is the condition of ConditionType in a Node object as the
// API server returns it (zero when none).
func conditionIn(node []byte) (condition, error) {
	var n struct {
		Status struct {
			Conditions []condition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(node, &n); err != nil {
		return condition{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == ConditionType {
			return c, nil
		}
	}
	return condition{}, nil
}

// stamp is a time as the API server writes metav1.Time: RFC 3339, UTC, seconds.
func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }
