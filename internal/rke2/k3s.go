package rke2

import (
	"bytes"
	"strings"
)

// KeyPreferBundledBin makes k3s put its own bin (and bin/aux, k3s-root's
// iptables) before the host's in PATH (k3s-io/k3s cmd/k3s/main.go).
const KeyPreferBundledBin = "prefer-bundled-bin"

// RenderK3sDropIn renders d for k3s, which reads config.yaml.d with the
// same "+" keys (k3s's pkg/configfilearg, which RKE2 uses too) but has no
// kube-proxy-extra-env: kube-proxy runs inside k3s, and its environment is
// the k3s unit's (the generator's drop-in sets IPTABLES_MODE there). With
// preferBundledBin the drop-in also sets prefer-bundled-bin: true, so the
// iptables that honours IPTABLES_MODE is the one kube-proxy, flannel and
// kube-router run.
func RenderK3sDropIn(d DropIn, preferBundledBin bool) ([]byte, error) {
	d.KubeProxyEnv = nil
	data, err := RenderDropIn(d)
	if err != nil {
		return nil, err
	}
	data = inK3sComments(data)
	if !preferBundledBin {
		return data, nil
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	return append(data, KeyPreferBundledBin+": true\n"...), nil
}

// k3sComment words the drop-in's comments for k3s: it is k3s that
// restarts (and runs apply first) and k3s's config that may pin things.
var k3sComment = strings.NewReplacer(
	"before every RKE2 start", "before every k3s start",
	"RKE2's own config", "k3s's own config",
)

// inK3sComments rewrites only comment lines: a value (a node label, an
// extra arg) is the operator's and stays as written.
func inK3sComments(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("#")) {
			lines[i] = []byte(k3sComment.Replace(string(l)))
		}
	}
	return bytes.Join(lines, nil)
}

// SupportsPreferBundledBin reports whether a k3s release knows the
// prefer-bundled-bin key: v1.26.0+k3s1 and the backports v1.25.5, v1.24.9,
// v1.23.15. k3s refuses an unknown key in its config and does not start,
// so an unknown version does not get it.
func SupportsPreferBundledBin(v KubeVersion) bool {
	if !v.Known() || v.Patch < 0 {
		return false
	}
	min := map[int]int{25: 5, 24: 9, 23: 15}
	switch {
	case v.Major != 1:
		return v.Major > 1
	case v.Minor >= 26:
		return true
	}
	p, ok := min[v.Minor]
	return ok && v.Patch >= p
}
