package testhost

import "strings"

// RKE2v138 installs an RKE2 v1.38 server (tarball layout) that has started
// once: Kubernetes 1.38 removed the NFTablesProxyMode gate, so a leftover
// feature-gates=NFTablesProxyMode=true stops its kube-proxy.
func (h *Host) RKE2v138() *Host {
	h.t.Helper()
	return h.RKE2Unit("tarball", "server").RKE2Version("v1.38.0+rke2r1")
}

// RKE2UpgradedTo puts RKE2 v (e.g. "v1.38.0+rke2r1") at the tarball
// unit's /usr/local/bin/rke2 while the data directory still holds the
// release that ran before: a node mid-upgrade, whose next start runs v.
func (h *Host) RKE2UpgradedTo(v string) *Host {
	h.t.Helper()
	return h.RKE2Binary("/usr/local/bin/rke2", v)
}

// KubeProxyArgs writes an RKE2 config file (relPath as for RKE2Config)
// whose line 2 is the key kube-proxy-arg, with args one list item a line
// after it; plus writes "kube-proxy-arg+:", as drop-ins usually do.
func (h *Host) KubeProxyArgs(relPath string, plus bool, args ...string) *Host {
	h.t.Helper()
	key := "kube-proxy-arg"
	if plus {
		key += "+"
	}
	var b strings.Builder
	b.WriteString("write-kubeconfig-mode: \"0644\"\n" + key + ":\n")
	for _, a := range args {
		b.WriteString("  - " + a + "\n")
	}
	return h.RKE2Config(relPath, b.String())
}
