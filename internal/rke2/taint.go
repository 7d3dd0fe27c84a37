package rke2

import (
	"fmt"
	"strings"
)

// KeyNodeTaint is RKE2's node-taint option: RKE2 hands it to kubelet's
// --register-with-taints, which applies taints only when kubelet creates
// the Node object; later starts never change or remove them.
const KeyNodeTaint = "node-taint"

// TaintEffects are the effects Kubernetes accepts (core/v1 TaintEffect).
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// Taint is one key=value:Effect, as kubelet's --register-with-taints and
// kubectl taint write it.
type Taint struct {
	Key, Value, Effect string
}

func (t Taint) String() string { return t.Key + "=" + t.Value + ":" + t.Effect }

// ParseTaint reads key=value:Effect. The value may not be empty: this tool's
// taints always name a backend. It is the one rule for what may reach
// node-taint: the operator config's node_taint is checked with it too.
func ParseTaint(v string) (Taint, error) {
	if err := checkPrintable(v); err != nil {
		return Taint{}, err
	}
	kv, effect, ok := strings.Cut(v, ":")
	key, value, ok2 := strings.Cut(kv, "=")
	if !ok || !ok2 || key == "" || value == "" || effect == "" {
		return Taint{}, fmt.Errorf("is not of the form key=value:Effect, e.g. rke2-proxy-backend/backend=iptables-legacy:NoSchedule")
	}
	if !validEffect(effect) {
		return Taint{}, fmt.Errorf("effect %q is not one of %s", effect, strings.Join(TaintEffects, ", "))
	}
	if err := checkQualifiedName(key); err != nil {
		return Taint{}, fmt.Errorf("key %q: %w", key, err)
	}
	if err := checkLabelValue(value); err != nil {
		return Taint{}, fmt.Errorf("value %q: %w", value, err)
	}
	return Taint{Key: key, Value: value, Effect: effect}, nil
}

func validEffect(e string) bool {
	for _, ok := range TaintEffects {
		if e == ok {
			return true
		}
	}
	return false
}

// checkQualifiedName is Kubernetes' rule for label and taint keys: an
// optional DNS-subdomain prefix and "/", then a name of at most 63
// alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
func checkQualifiedName(k string) error {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	} else if prefix == "" || len(prefix) > 253 || !dnsSubdomain(prefix) {
		return fmt.Errorf("prefix %q is not a DNS subdomain (lower-case letters, digits, '-' and '.')", prefix)
	}
	if err := checkLabelValue(name); err != nil || name == "" {
		return fmt.Errorf("name %q must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", name)
	}
	return nil
}

// checkLabelValue is Kubernetes' label-value rule (taint values follow it).
func checkLabelValue(v string) error {
	if len(v) > 63 {
		return fmt.Errorf("is longer than 63 characters")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(v)-1 || c != '-' && c != '_' && c != '.') {
			return fmt.Errorf("must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
		}
	}
	return nil
}

func dnsSubdomain(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func checkTaint(v string) error {
	_, err := ParseTaint(v)
	return err
}
