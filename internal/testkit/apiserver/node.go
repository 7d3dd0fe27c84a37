package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// Node is what tests read of a Node object, as the admin sees it.
type Node struct {
	ResourceVersion string
	Annotations     map[string]string
	Conditions      []Condition
}

// Condition is one of a Node's status.conditions.
type Condition struct {
	Type, Status, Reason, Message         string
	LastHeartbeatTime, LastTransitionTime string
}

// Condition returns the condition of type typ, if the Node has one.
func (n Node) Condition(typ string) (Condition, bool) {
	for _, c := range n.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return Condition{}, false
}

// Node reads the Node name.
func (s *Server) Node(name string) Node {
	s.t.Helper()
	code, body := s.Do(http.MethodGet, "/api/v1/nodes/"+name, "", nil)
	if code != http.StatusOK {
		s.t.Fatalf("apiserver: GET node %s: %d %s", name, code, body)
	}
	var raw struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		Status struct {
			Conditions []Condition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		s.t.Fatalf("apiserver: node %s: %v\n%s", name, err, body)
	}
	return Node{ResourceVersion: raw.Metadata.ResourceVersion, Annotations: raw.Metadata.Annotations, Conditions: raw.Status.Conditions}
}

// WaitNode polls the Node name until cond holds on it and returns it, or
// fails t after limit with what the Node last was.
func (s *Server) WaitNode(t testing.TB, name, what string, limit time.Duration, cond func(Node) bool) Node {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		n := s.Node(name)
		if cond(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: no %s within %s; last: %+v", name, what, limit, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
