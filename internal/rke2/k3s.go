package rke2

// KeyPreferBundledBin makes k3s put its own bin (and bin/aux, k3s-root's
// iptables) before the host's in PATH (k3s-io/k3s cmd/k3s/main.go).
const KeyPreferBundledBin = "prefer-bundled-bin"

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
