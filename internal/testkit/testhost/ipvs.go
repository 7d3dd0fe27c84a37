package testhost

// IPVSNode writes /etc/rancher/rke2/config.yaml as operators of ipvs
// nodes do: proxy-mode=ipvs, and ipvs-scheduler=sched when sched is not
// "" (line 3 is proxy-mode, line 4 the scheduler). Pair it with a kernel
// profile and an RKE2 release (IPVSNodeOn).
func (h *Host) IPVSNode(sched string, extra ...string) *Host {
	h.t.Helper()
	args := []string{"proxy-mode=ipvs"}
	if sched != "" {
		args = append(args, "ipvs-scheduler="+sched)
	}
	return h.KubeProxyArgs("config.yaml", false, append(args, extra...)...)
}

// IPVSNodeOn is a Debian 12 RKE2 server (tarball layout) of release v
// (e.g. "v1.34.10+rke2r1", "v1.38.0+rke2r1", "v1.40.0+rke2r1") whose
// RKE2 config runs kube-proxy in ipvs mode with scheduler sh: the ipvs
// fleets KEP-5495 makes move.
func (h *Host) IPVSNodeOn(v string) *Host {
	h.t.Helper()
	return h.Debian12().RKE2Unit("tarball", "server").RKE2Version(v).IPVSNode("sh")
}
