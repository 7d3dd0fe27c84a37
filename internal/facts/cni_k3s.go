package facts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// k3s's keys for the network writers it runs in its own process. Both are
// server flags: an agent learns them from its server, so an agent's own
// config seldom holds them and k3s's defaults (both run) stand.
const (
	KeyFlannelBackend       = "flannel-backend"
	KeyDisableNetworkPolicy = "disable-network-policy"
)

// K3sNetwork is what k3s runs beside kube-proxy: its embedded flannel and
// kube-router's network policy controller. k3s has no HelmChartConfig for
// them; the config and the unit's command line turn them off.
type K3sNetwork struct {
	// Flannel is false when flannel-backend is none.
	Flannel bool `json:"flannel"`
	// NetworkPolicy is false when disable-network-policy is true.
	NetworkPolicy bool `json:"network_policy"`
	// FlannelSource and NetworkPolicySource say where each was set, or
	// that k3s's default stands, for the fix texts.
	FlannelSource       string `json:"flannel_source"`
	NetworkPolicySource string `json:"network_policy_source"`
}

// ReadK3sNetwork reads k3s's config (the main file and config.yaml.d,
// merged as k3s does) and its units' ExecStart= lines (install.sh puts
// INSTALL_K3S_EXEC's flags there, and flags win over the config), without
// the rest of the probe: verify needs it on k3s. The second value lists
// what could not be read.
func ReadK3sNetwork(root hostfs.Root, kind distro.Kind) (K3sNetwork, []string) {
	p := &probe{root: root, opts: Options{Distribution: kind}}
	r := p.rke2Config()
	return r.k3sNetwork(), p.f.Unreadable
}

// k3sNetwork is k3sNetwork for r's merged config and its units' command
// lines, both already read.
func (r RKE2) k3sNetwork() K3sNetwork {
	var args [][]string
	for _, u := range r.Units {
		args = append(args, unitWords(u.execStart))
	}
	return k3sNetwork(r.Config, args)
}

// k3sNetwork decides from the merged config and the units' command lines.
func k3sNetwork(eff rke2.Effective, args [][]string) K3sNetwork {
	n := K3sNetwork{Flannel: true, NetworkPolicy: true,
		FlannelSource:       "k3s's default (" + KeyFlannelBackend + " vxlan)",
		NetworkPolicySource: "k3s's default (" + KeyDisableNetworkPolicy + " unset)"}
	if v := eff.Strings(KeyFlannelBackend); len(v) > 0 {
		last := strings.TrimSpace(v[len(v)-1])
		n.Flannel = last != "none"
		n.FlannelSource = fmt.Sprintf("%s: %s in %s", KeyFlannelBackend, last, lastOrigin(eff, KeyFlannelBackend))
	}
	if off, ok := eff.Bool(KeyDisableNetworkPolicy); ok {
		n.NetworkPolicy = !off
		n.NetworkPolicySource = fmt.Sprintf("%s: %t in %s", KeyDisableNetworkPolicy, off, lastOrigin(eff, KeyDisableNetworkPolicy))
	}
	for _, words := range args {
		if v, ok := flagValue(words, KeyFlannelBackend, false); ok {
			n.Flannel = v != "none"
			n.FlannelSource = "--" + KeyFlannelBackend + "=" + v + " on k3s's command line"
		}
		if v, ok := flagValue(words, KeyDisableNetworkPolicy, true); ok {
			if off, err := strconv.ParseBool(v); err == nil {
				n.NetworkPolicy = !off
				n.NetworkPolicySource = fmt.Sprintf("--%s=%t on k3s's command line", KeyDisableNetworkPolicy, off)
			}
		}
	}
	return n
}

// lastOrigin is the file that set key last.
func lastOrigin(eff rke2.Effective, key string) string {
	if from := eff.ItemOrigin[key]; len(from) > 0 {
		return from[len(from)-1]
	}
	return eff.Origin[key]
}

// unitWords splits an ExecStart= line into words, dropping the single or
// double quotes install.sh puts around each argument.
func unitWords(line string) []string {
	words := strings.Fields(line)
	for i, w := range words {
		if len(w) >= 2 && (w[0] == '\'' || w[0] == '"') && w[len(w)-1] == w[0] {
			words[i] = w[1 : len(w)-1]
		}
	}
	return words
}

// flagValue is the last value of flag name in words ("-name" or
// "--name", "=value" or the next word; a boolean flag alone is "true"),
// as urfave/cli, which k3s uses, reads it.
func flagValue(words []string, name string, boolean bool) (value string, ok bool) {
	for i, w := range words {
		trimmed := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-")
		if trimmed == w {
			continue
		}
		key, v, hasValue := strings.Cut(trimmed, "=")
		if key != name {
			continue
		}
		switch {
		case hasValue:
			value, ok = v, true
		case boolean:
			value, ok = "true", true
		case i+1 < len(words):
			value, ok = words[i+1], true
		}
	}
	return value, ok
}
