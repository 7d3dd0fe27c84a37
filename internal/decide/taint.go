package decide

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// nodeTaints applies node_taint when its value names the chosen backend,
// and says so either way: a taint keeps pods off the node from the moment
// kubelet registers it, and never changes afterwards.
func nodeTaints(s *state, b backend.Backend) []string {
	taint := s.c.NodeTaint
	if taint == "" {
		return nil
	}
	kv, _, _ := strings.Cut(taint, ":")
	_, value, _ := strings.Cut(kv, "=")
	if value != string(b) {
		s.say("node_taint is for %s nodes; this node runs %s, so %s adds no taint.", value, b, s.name())
		return nil
	}
	s.say("%s registers the node with the taint %s (node_taint); pods need a matching toleration, and kubelet applies it only when the node is first registered.", s.name(), taint)
	return []string{taint}
}
