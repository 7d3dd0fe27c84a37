package config

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// TaintKey is the only key node_taint accepts: the node label's key, so
// one toleration or node affinity term matches both, and the taint's value
// is a backend.
const TaintKey = vocab.NodeLabelPlanned

// checkNodeTaint accepts "" (no taint) or TaintKey=<backend>:<Effect>. The
// value names the backend the taint is for: a node registers with it only
// when it chooses that backend, so one config can go to a whole pool and
// taint only its legacy nodes. kubelet's own syntax rules come from
// rke2.ParseTaint, the rule the drop-in writer applies.
func checkNodeTaint(v string) (string, error) {
	if v == "" {
		return v, nil
	}
	t, err := rke2.ParseTaint(v)
	if err != nil {
		return "", fmt.Errorf("%q %w", v, err)
	}
	if t.Key != TaintKey {
		return "", fmt.Errorf("%q: the key must be %s, so that the taint says which backend the node runs (e.g. %s=iptables-legacy:NoSchedule)", v, TaintKey, TaintKey)
	}
	if _, err := checkBackendName(t.Value); err != nil {
		return "", fmt.Errorf("%q: the value must be the backend whose nodes get the taint: %w", v, err)
	}
	return v, nil
}
