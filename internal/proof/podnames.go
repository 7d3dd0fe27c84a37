package proof

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// podPage is how many pods one request of the node's pod list asks for:
// a node runs 110 at most by default, so one page, and a pod with its
// status is a few to some tens of kB, well under podMaxBody. Tests
// shorten it to page.
var podPage = 250

// podMaxBody bounds one page of the pod list.
const podMaxBody = 32 << 20

// podListOptions bound the pod list's client: one retry after a dropped
// connection or a 5xx, so an API server that is gone costs a census
// about two request timeouts (kubeapi's 5s), never the census itself.
var podListOptions = kubeapi.Options{Attempts: 2}

// NamePods names c's pods (namespace/name beside the UID) from one list
// of this node's pods, GET /api/v1/pods?fieldSelector=spec.nodeName=NODE,
// read with the kubelet's credentials (Locate), which the Node authorizer
// lets list the pods bound to its own node. It returns the requests sent
// (0 when c holds no pod). Any failure (no credentials, no API server, a
// refusal) is said in c, PodNames false with the reason, never returned:
// the UIDs stay and the verdict is the same.
func NamePods(ctx context.Context, root hostfs.Root, kind distro.Kind, c *census.Census) (requests int) {
	if !c.PodUIDs() {
		c.PodNames, c.PodNamesReason = true, ""
		return 0
	}
	node, pods, requests, err := nodePods(ctx, root, kind, podListOptions)
	if err != nil {
		c.PodNames, c.PodNamesReason = false, "the node's pods could not be listed: "+err.Error()
		return requests
	}
	if missing := c.NamePods(pods); len(missing) > 0 {
		c.PodNamesReason = fmt.Sprintf("%d of the pod UIDs read are not among the %d pods of node %s's pod list (deleted since, or the kubelet's credentials are another node's): %s",
			len(missing), len(pods), node, strings.Join(missing, ", "))
	}
	return requests
}

// nodePods lists the node's pods by UID, page by page, at most 20 pages:
// an API server handing out continue tokens forever is not listing one
// node's pods.
func nodePods(ctx context.Context, root hostfs.Root, kind distro.Kind, o kubeapi.Options) (node string, pods map[string]census.Pod, requests int, err error) {
	t, err := Locate(root, kind)
	if err != nil {
		return "", nil, 0, fmt.Errorf("the kubelet's credentials: %w", err)
	}
	o.MaxBody = max(o.MaxBody, podMaxBody)
	cl, err := kubeapi.New(t.Creds, o)
	if err != nil {
		return "", nil, 0, err
	}
	q := url.Values{"fieldSelector": {"spec.nodeName=" + t.Node}}
	list, requests, err := kubeapi.List(ctx, cl.Get, "/api/v1/pods", q, kubeapi.Paging{What: "pod list", Limit: podPage, MaxPages: 20}, decodePods)
	if err != nil {
		return t.Node, nil, requests, fmt.Errorf("node %s: %w", t.Node, err)
	}
	pods = map[string]census.Pod{}
	for _, p := range list {
		pods[p.uid] = p.pod
	}
	return t.Node, pods, requests, nil
}

// mirrorAnnotation, on the API's mirror of a static pod, is the UID the
// kubelet runs it under (k8s.io/kubernetes pkg/kubelet/types).
const mirrorAnnotation = "kubernetes.io/config.mirror"

// uidPod is a pod under one of its UIDs.
type uidPod struct {
	uid string
	pod census.Pod
}

// decodePods returns one PodList page's pods and its continue token.
func decodePods(data []byte) (pods []uidPod, cont string, err error) {
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Continue string `json:"continue"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				UID         string            `json:"uid"`
				Namespace   string            `json:"namespace"`
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, "", err
	}
	if list.Kind != "PodList" {
		return nil, "", fmt.Errorf("kind %q, want PodList", list.Kind)
	}
	for _, it := range list.Items {
		// The API server validates these; one that sends something
		// else is not believed, so the census never prints a terminal
		// escape or a newline from the cluster.
		m := it.Metadata
		if m.UID == "" || !objectName(m.Namespace, 63) || !objectName(m.Name, 253) {
			continue
		}
		pod := census.Pod{Namespace: m.Namespace, Name: m.Name}
		pods = append(pods, uidPod{m.UID, pod})
		// A static pod's cgroup carries the kubelet's UID (its
		// manifest's hash), which the API shows only on the mirror pod.
		if static := m.Annotations[mirrorAnnotation]; static != "" {
			pods = append(pods, uidPod{static, pod})
		}
	}
	return pods, list.Metadata.Continue, nil
}

// objectName says whether s could be a Kubernetes object's name of at
// most max characters: lower-case letters, digits, '-' and '.'
// (a namespace, a DNS label, has no '.', but a looser check is as safe
// to print).
func objectName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
