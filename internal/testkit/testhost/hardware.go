package testhost

import (
	"path"
	"strings"
)

// PCI adds a PCI device the way sysfs shows it: /sys/bus/pci/devices/<addr>
// is a symlink into /sys/devices, vendor and device read "0x1b4b\n", and
// driver (when not "") is a symlink to /sys/bus/pci/drivers/<driver>.
func (h *Host) PCI(addr, vendor, device, driver string) *Host {
	h.t.Helper()
	devDir := "/sys/devices/pci0000:00/" + addr
	h.File(devDir+"/vendor", "0x"+strings.ToLower(vendor)+"\n")
	h.File(devDir+"/device", "0x"+strings.ToLower(device)+"\n")
	h.Symlink("/sys/bus/pci/devices/"+addr, "../../../devices/pci0000:00/"+addr)
	if driver != "" {
		h.Driver("pci", driver)
		h.Symlink(devDir+"/driver", "../../../bus/pci/drivers/"+driver)
	}
	return h
}

// Driver registers a driver under /sys/bus/<bus>/drivers.
func (h *Host) Driver(bus, name string) *Host {
	h.t.Helper()
	return h.Mkdir(path.Join("/sys/bus", bus, "drivers", name))
}

// DMI writes /sys/class/dmi/id/sys_vendor and product_name.
func (h *Host) DMI(vendor, product string) *Host {
	h.t.Helper()
	h.File("/sys/class/dmi/id/sys_vendor", vendor+"\n")
	return h.File("/sys/class/dmi/id/product_name", product+"\n")
}

// DeviceTree gives the machine a device tree as the kernel exports it:
// /proc/device-tree links to /sys/firmware/devicetree/base, whose model is
// a NUL-terminated string and compatible a NUL-separated list. QEMU's
// arm64 virt board has model and compatible "linux,dummy-virt".
func (h *Host) DeviceTree(model string, compatible ...string) *Host {
	h.t.Helper()
	base := "/sys/firmware/devicetree/base"
	h.File(base+"/model", model+"\x00")
	h.File(base+"/compatible", strings.Join(compatible, "\x00")+"\x00")
	return h.Symlink("/proc/device-tree", base)
}

// IptablesAlternative lays out the host's iptables as Debian and RHEL do:
// /usr/sbin/iptables -> /etc/alternatives/iptables -> /usr/sbin/iptables-<mode>
// -> xtables-<mode>-multi. mode is "legacy" or "nft".
func (h *Host) IptablesAlternative(mode string) *Host {
	h.t.Helper()
	if mode != "legacy" && mode != "nft" {
		h.t.Fatalf("testhost: IptablesAlternative(%q): want legacy or nft", mode)
	}
	h.File("/usr/sbin/xtables-"+mode+"-multi", "#!fake binary\n")
	h.Symlink("/usr/sbin/iptables-"+mode, "xtables-"+mode+"-multi")
	h.Symlink("/etc/alternatives/iptables", "/usr/sbin/iptables-"+mode)
	return h.Symlink("/usr/sbin/iptables", "/etc/alternatives/iptables")
}

// LegacyTables writes /proc/net/ip_tables_names and ip6_tables_names. A nil
// list leaves the file out (ip_tables / ip6_tables not loaded); an empty one
// writes an empty file (loaded, no table yet).
func (h *Host) LegacyTables(v4, v6 []string) *Host {
	h.t.Helper()
	for file, names := range map[string][]string{"/proc/net/ip_tables_names": v4, "/proc/net/ip6_tables_names": v6} {
		if names == nil {
			continue
		}
		content := ""
		for _, n := range names {
			content += n + "\n"
		}
		h.File(file, content)
	}
	return h
}
