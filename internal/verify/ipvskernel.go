package verify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
)

// withIPVSKernel wraps read (the live footprint) so that an absent IPVS
// is said as what is true of root's kernel: the netlink reader only sees
// that no IPVS family is registered, which is also the case when ip_vs.ko
// is installed but not loaded (every Debian node that never ran ipvs
// mode), and "IPVS not in this kernel" misleads anyone checking a
// migration off ipvs (issue 30 item 8). The module tree is read only then.
func withIPVSKernel(root hostfs.Root, read func() ipvs.Footprint) func() ipvs.Footprint {
	return func() ipvs.Footprint {
		f := read()
		if !f.Services.Present && f.Services.Absent == ipvs.NotInKernel {
			if why := ipvsAbsence(root); why != "" {
				f.Services.Absent = why
			}
		}
		return f
	}
}

// ipvsAbsence says why the running kernel of root has no IPVS, from its
// module tree; "" when the tree cannot tell more than the netlink reader.
func ipvsAbsence(root hostfs.Root) string {
	data, err := root.ReadFile(hostfs.KernelOSRelease)
	if err != nil {
		return ""
	}
	release := strings.TrimSpace(string(data))
	s, err := kmod.ReadState(root, release)
	if err != nil || !s.Supported {
		return ""
	}
	return ipvsAbsenceIn(s, release)
}

// ipvsAbsenceIn words an absent IPVS for a kernel whose modules are s.
func ipvsAbsenceIn(s kmod.State, release string) string {
	switch {
	case s.Present("ip_vs"):
		return "" // loaded or built in, yet no family: the reader's words stand
	case s.Available["ip_vs"]:
		return "ip_vs is not loaded (the module is available): no virtual server can exist"
	case s.AvailableKnown:
		return fmt.Sprintf("IPVS is not in this kernel (ip_vs is not loaded, not built in, and not in %s/%s/modules.dep): no virtual server can exist", hostfs.ModulesDir, release)
	}
	return "ip_vs is not loaded (whether its module is installed is unknown): no virtual server can exist"
}
