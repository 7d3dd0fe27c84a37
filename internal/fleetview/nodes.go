// Package fleetview is `kubectl proxy-backend`'s view of the fleet: every
// Node's planned backend (the node label RKE2 registers it with), what the
// node itself last proved (its annotations and its RKE2ProxyBackendProblem
// condition, written by verify and watch), read from the Node objects
// only. Decoding and formatting are pure; the command around them reads
// the user's kubeconfig and lists the Nodes.
package fleetview

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// MaxList bounds a NodeList the view reads: a 5000-node cluster's list
// with full status is tens of MiB; more is not a Node list.
const MaxList = 256 << 20

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
}

// Decode reads a NodeList (GET /api/v1/nodes) into Nodes sorted by name.
func Decode(data []byte) ([]Node, error) {
	if len(data) > MaxList {
		return nil, fmt.Errorf("node list of %d bytes, over the %d read", len(data), MaxList)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct {
				Name              string            `json:"name"`
				Labels            map[string]string `json:"labels"`
				Annotations       map[string]string `json:"annotations"`
				CreationTimestamp string            `json:"creationTimestamp"`
			} `json:"metadata"`
			Status struct {
				Conditions []struct {
					Type    string `json:"type"`
					Status  string `json:"status"`
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	if list.Kind != "NodeList" {
		return nil, fmt.Errorf("node list: kind %q, want NodeList", list.Kind)
	}
	nodes := make([]Node, 0, len(list.Items))
	for _, it := range list.Items {
		n := Node{Name: it.Metadata.Name, Labels: it.Metadata.Labels, Annotations: it.Metadata.Annotations}
		// A bad timestamp only costs the node its age.
		n.Created, _ = time.Parse(time.RFC3339, it.Metadata.CreationTimestamp)
		for _, c := range it.Status.Conditions {
			if c.Type == vocab.NodeConditionType {
				n.Condition = &Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, nil
}
