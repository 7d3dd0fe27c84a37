package cleanup

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// ipvsSysctl is a setting kube-proxy's ipvs mode makes (pkg/proxy/ipvs
// proxier.go: the vs/* ones always, arp_* with --ipvs-strict-arp), with
// the value it sets and who else may rely on it. path is under /proc/sys.
type ipvsSysctl struct {
	path, value, why string
}

var ipvsSysctls = []ipvsSysctl{
	{hostfs.IPVSConntrack, "1", "it goes with the ip_vs module (unloaded at the next boot: apply no longer loads it, or modprobe -r ip_vs now)"},
	{"/proc/sys/net/ipv4/vs/conn_reuse_mode", "0", "it goes with the ip_vs module"},
	{"/proc/sys/net/ipv4/vs/expire_nodest_conn", "1", "it goes with the ip_vs module"},
	{"/proc/sys/net/ipv4/vs/expire_quiescent_template", "1", "it goes with the ip_vs module"},
	{"/proc/sys/net/ipv4/conf/all/arp_ignore", "1", "kube-proxy's ipvs-strict-arp sets it, and keepalived or MetalLB setups set it too: reset it (sysctl -w net.ipv4.conf.all.arp_ignore=0, and drop it from /etc/sysctl.d) only if nothing else on the node needs it"},
	{"/proc/sys/net/ipv4/conf/all/arp_announce", "2", "kube-proxy's ipvs-strict-arp sets it, and keepalived or MetalLB setups set it too: reset it (sysctl -w net.ipv4.conf.all.arp_announce=0, and drop it from /etc/sysctl.d) only if nothing else on the node needs it"},
}

// IPVSSysctls says which of ipvs mode's settings root's /proc/sys (this
// network namespace's) still holds at ipvs's value. The sweep never writes
// a sysctl: another owner may have set the same one.
func IPVSSysctls(root hostfs.Root) []string {
	var out []string
	for _, s := range ipvsSysctls {
		data, err := root.ReadFileMax(s.path, 64)
		if err != nil {
			continue // absent: IPVS is not in this kernel, nothing left
		}
		if v := strings.TrimSpace(string(data)); v == s.value {
			key := strings.ReplaceAll(strings.TrimPrefix(s.path, "/proc/sys/"), "/", ".")
			out = append(out, fmt.Sprintf("%s=%s stays: %s", key, v, s.why))
		}
	}
	if !root.Exists("/proc/sys/net/ipv4/vs") {
		out = append(out, "net.ipv4.vs.*: not in this kernel (no IPVS), nothing left")
	}
	return out
}
