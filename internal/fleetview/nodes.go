// Package fleetview is `kubectl proxy-backend`'s view of the fleet: every
// Node's planned backend (the node label RKE2 registers it with), what the
// node itself last proved (its annotations and its RKE2ProxyBackendProblem
// condition, written by verify and watch), read from the Node objects
// only. Decoding and formatting are pure; the command around them reads
// the user's kubeconfig and lists the Nodes page by page.
package fleetview

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// MaxPage bounds one page of the Node list (PageSize Nodes): a Node with
// full status is a few kB to some tens of kB.
const MaxPage = 64 << 20

// Node is the part of a Node object the view reads.
type Node struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	Created     time.Time
	Condition   *Condition // nil: the node has none of ours
}

// Condition is the node's RKE2ProxyBackendProblem condition.
type Condition struct {
	Status, Reason, Message string
	// Heartbeat is its lastHeartbeatTime (zero when it has none or it
	// does not parse).
	Heartbeat time.Time
}

// DecodePage reads one NodeList answer of GET /api/v1/nodes?limit=...:
// its Nodes, in the API server's order, and the continue token of the
// next page ("" when this was the last).
func DecodePage(data []byte) (nodes []Node, cont string, err error) {
	if len(data) > MaxPage {
		return nil, "", fmt.Errorf("%d bytes, over the %d read", len(data), MaxPage)
	}
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Continue string `json:"continue"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name              string            `json:"name"`
				Labels            map[string]string `json:"labels"`
				Annotations       map[string]string `json:"annotations"`
				CreationTimestamp string            `json:"creationTimestamp"`
			} `json:"metadata"`
			Status struct {
				Conditions []struct {
					Type              string `json:"type"`
					Status            string `json:"status"`
					Reason            string `json:"reason"`
					Message           string `json:"message"`
					LastHeartbeatTime string `json:"lastHeartbeatTime"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, "", err
	}
	if list.Kind != "NodeList" {
		return nil, "", fmt.Errorf("kind %q, want NodeList", list.Kind)
	}
	nodes = make([]Node, 0, len(list.Items))
	for _, it := range list.Items {
		n := Node{Name: it.Metadata.Name, Labels: it.Metadata.Labels, Annotations: it.Metadata.Annotations}
		// A bad timestamp only costs the node its age.
		n.Created, _ = time.Parse(time.RFC3339, it.Metadata.CreationTimestamp)
		for _, c := range it.Status.Conditions {
			if c.Type == vocab.NodeConditionType {
				n.Condition = &Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
				n.Condition.Heartbeat, _ = time.Parse(time.RFC3339, c.LastHeartbeatTime)
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, list.Metadata.Continue, nil
}

// StaleAfter is how long n's condition stands after its heartbeat: the
// node's own stale-after annotation, at most (and, when it gives none or
// one that does not parse, exactly) vocab.NodeStaleAfterMax.
func (n Node) StaleAfter() time.Duration {
	d, err := time.ParseDuration(n.Annotations[vocab.NodeAnnotationStaleAfter])
	if err != nil || d <= 0 || d > vocab.NodeStaleAfterMax {
		return vocab.NodeStaleAfterMax
	}
	return d
}
