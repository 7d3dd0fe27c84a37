// Package census answers, for one node, whether it can move to a kernel
// without legacy xtables (CONFIG_NETFILTER_XTABLES_LEGACY off, as new
// distribution kernels ship): it reads the host's network namespace and
// every other one a process holds (pods, found from /proc/PID/ns/net),
// each in place, and names the legacy tables that hold rules, the nftables
// tables whose rules need nft_compat, and whose they are where that is
// known. The readers are internal/netfilter's (LegacyHere, NFTCompat); a
// namespace is entered read-only with setns on a thread that dies after.
package census

import (
	"strconv"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Schema is the version of the census document's shape.
const Schema = 1

// Verdicts: "can move to a kernel without legacy xtables".
const (
	Yes     = "yes"
	No      = "no"
	Unknown = "unknown" // a namespace could not be read, or a bounded round did not reach them all
)

// Census is one node's answer and what it rests on.
type Census struct {
	Schema int `json:"schema"`
	// LegacyFree is true only when every namespace was read and none holds
	// a legacy rule: never ahead of what was read.
	LegacyFree bool   `json:"legacy_free"`
	Verdict    string `json:"verdict"`
	Reason     string `json:"reason"`
	// HeldBackBy are the namespaces holding legacy rules.
	HeldBackBy []Ref `json:"held_back_by"`
	// Unread are the namespaces that could not be read.
	Unread []Ref `json:"unread,omitempty"`
	// NFTCompat counts the namespaces whose nftables rules use xtables
	// extensions (nft_compat): they move without legacy xtables, but
	// still need nft_compat and the xt_* modules.
	NFTCompat int `json:"nft_compat_namespaces"`
	// NotVisited counts the namespaces a bounded round (MaxNamespaces) left
	// for later.
	NotVisited int `json:"not_visited,omitempty"`
	// Exited counts namespaces whose every process exited before it could
	// be entered: gone, so they hold nothing back.
	Exited int `json:"exited,omitempty"`
	// PodNames says whether pods are named (namespace/name) beside their
	// UID, from the node's pod list (NamePods); PodNamesReason says why
	// not when it is false. Take alone reads no API.
	PodNames       bool        `json:"pod_names"`
	PodNamesReason string      `json:"pod_names_reason,omitempty"`
	Namespaces     []Namespace `json:"namespaces"`
}

// Namespace is one network namespace as read.
type Namespace struct {
	Where
	// Legacy are the legacy tables holding rules; EmptyLegacy the ones
	// that exist with nothing in them ("ipv4 filter"), which a probe
	// (kube-proxy's, iptables-legacy -L) leaves and which hold nothing back.
	Legacy      []LegacyTable           `json:"legacy,omitempty"`
	EmptyLegacy []string                `json:"empty_legacy_tables,omitempty"`
	NFTCompat   []netfilter.CompatTable `json:"nft_compat,omitempty"`
	// Exited says every process of the namespace exited before it was
	// entered; Error says why it could not be read.
	Exited bool   `json:"exited,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Where is which namespace, and through which process: the same in a
// namespace as read and in the verdict's reference to it.
type Where struct {
	Inode uint64 `json:"inode"`
	// Host is the census's own namespace, read without entering.
	Host bool `json:"host,omitempty"`
	// PID is the process it was entered through, Comm its name; PodUID and
	// Container, or Unit, say where that process runs (its cgroup).
	// PodNamespace and PodName are the pod's, where the node's pod list
	// named its UID.
	PID          int    `json:"pid,omitempty"`
	Comm         string `json:"comm,omitempty"`
	PodUID       string `json:"pod_uid,omitempty"`
	PodNamespace string `json:"pod_namespace,omitempty"`
	PodName      string `json:"pod_name,omitempty"`
	Container    string `json:"container,omitempty"`
	Unit         string `json:"unit,omitempty"`
}

// LegacyTable is one legacy table that holds something.
type LegacyTable struct {
	Family rules.Family `json:"family"`
	Table  string       `json:"table"`
	Rules  int          `json:"rules"`
	// UserChains counts the chains a writer created.
	UserChains int `json:"user_chains"`
	// Policies are the built-in chains whose policy is not ACCEPT
	// ("INPUT DROP").
	Policies []string `json:"policies,omitempty"`
	// Writers are whose chains hold the rules, as the chain names tell
	// (internal/ownership); "unknown" for names no known writer uses.
	// Legacy xtables records no writer itself.
	Writers []string `json:"writers"`
}

// Ref names a namespace in the verdict.
type Ref struct {
	Where
	// Tables are the legacy tables holding rules ("ipv4 nat"), or why the
	// namespace was not read.
	Tables []string `json:"tables,omitempty"`
	Error  string   `json:"error,omitempty"`
}

func (n Namespace) ref() Ref {
	r := Ref{Where: n.Where, Error: n.Error}
	for _, t := range n.Legacy {
		r.Tables = append(r.Tables, string(t.Family)+" "+t.Table)
	}
	return r
}

// Who is the namespace in words: "the host", "pod NS/NAME (uid UID, pid
// P comm)", "pod UID (pid P comm)" when the pod is not named, "unit U (pid
// P comm)" or "pid P comm".
func (r Where) Who() string {
	switch {
	case r.Host:
		return "the host"
	case r.PodName != "":
		return "pod " + r.PodNamespace + "/" + r.PodName + " (uid " + r.PodUID + ", " + r.process() + ")"
	case r.PodUID != "":
		return "pod " + r.PodUID + " (" + r.process() + ")"
	case r.Unit != "":
		return "unit " + r.Unit + " (" + r.process() + ")"
	}
	return r.process()
}

func (r Where) process() string {
	return "pid " + strconv.Itoa(r.PID) + " " + r.Comm
}

// Pod is a pod's namespace and name.
type Pod struct{ Namespace, Name string }

// NamePods puts each pod's namespace and name beside its UID from pods
// (the node's pods by UID) and judges again so the reason names them.
// It returns the pod UIDs pods lacks, which stay UIDs; pods are said to
// be named only when none is missing.
func (c *Census) NamePods(pods map[string]Pod) (missing []string) {
	for i := range c.Namespaces {
		n := &c.Namespaces[i]
		if n.PodUID == "" {
			continue
		}
		p, ok := pods[n.PodUID]
		if !ok {
			missing = append(missing, n.PodUID)
			continue
		}
		n.PodNamespace, n.PodName = p.Namespace, p.Name
	}
	c.PodNames, c.PodNamesReason = len(missing) == 0, ""
	c.judge()
	return missing
}

// PodUIDs says whether any namespace read is a pod's: only then is the
// node's pod list worth a read.
func (c *Census) PodUIDs() bool {
	for _, n := range c.Namespaces {
		if n.PodUID != "" {
			return true
		}
	}
	return false
}
