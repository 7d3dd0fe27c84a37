package facts

import (
	"errors"
	"path"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

const (
	// maxDrivers bounds the driver walk; a big server has a few hundred.
	maxDrivers = 4096
	// maxPCIDevices bounds the device walk. Large SR-IOV hosts expose
	// thousands of virtual functions, each a PCI device a legacy trigger
	// may name, so the cap is far above any host seen; reaching it is
	// reported, since a trigger past it would silently not match.
	maxPCIDevices = 1 << 16
)

func (p *probe) hardware() Hardware {
	if p.image {
		p.notInImage("The machine's hardware (%s, %s, %s, the device tree): an image is not the machine it boots on, so PCI, DMI, driver and device-tree legacy triggers are matched by the generator on the node.", hostfs.PCIDevicesDir, hostfs.DMIDir, hostfs.SysBusDir)
		return Hardware{PCI: []PCIDevice{}, Drivers: []string{}}
	}
	hw := Hardware{PCI: p.pciDevices(), Drivers: p.drivers()}
	hw.DMIVendor = p.dmi("sys_vendor")
	hw.DMIProduct = p.dmi("product_name")
	hw.DeviceTreeModel, hw.DeviceTreeCompatible = p.deviceTree()
	// A machine that boots from a device tree (arm64 NAS boxes) has no
	// DMI: that is how it is built, not a fact missing.
	deviceTree := hw.DeviceTreeModel != "" || len(hw.DeviceTreeCompatible) > 0
	if hw.DMIVendor == "" && hw.DMIProduct == "" && !deviceTree {
		p.problem("%s has no sys_vendor or product_name: DMI legacy triggers cannot match (normal in containers and on boards without DMI).", hostfs.DMIDir)
	}
	return hw
}

func (p *probe) pciDevices() []PCIDevice {
	devices := []PCIDevice{}
	entries, err := p.root.ReadDirMax(hostfs.PCIDevicesDir, maxPCIDevices)
	if errors.Is(err, hostfs.ErrTooLarge) {
		p.problem("%s lists more than %d devices: only %d of them were read, so a PCI legacy trigger on any other cannot match; set the backend explicitly on this host.", hostfs.PCIDevicesDir, maxPCIDevices, maxPCIDevices)
		err = nil
	}
	if err != nil {
		if isNotExist(err) {
			p.problem("%s is missing: PCI legacy triggers cannot match (normal in containers and on hosts without PCI).", hostfs.PCIDevicesDir)
		} else {
			p.unreadable("%s: %s: PCI devices are unknown; check that sysfs is mounted and readable", hostfs.PCIDevicesDir, errText(err))
		}
		return devices
	}
	for _, e := range entries {
		dir := path.Join(hostfs.PCIDevicesDir, e.Name())
		dev := PCIDevice{
			Address: e.Name(),
			Vendor:  p.pciID(dir + "/vendor"),
			Device:  p.pciID(dir + "/device"),
		}
		if target, err := p.root.Readlink(dir + "/driver"); err == nil {
			dev.Driver = path.Base(target)
		}
		devices = append(devices, dev)
	}
	return devices
}

// pciID turns sysfs's "0x1b4b\n" into "1b4b" ("" when unreadable).
func (p *probe) pciID(hostPath string) string {
	data, ok := p.read(hostPath, "this PCI device's id is unknown")
	if !ok {
		return ""
	}
	s := strings.ToLower(strings.TrimSpace(string(data)))
	return strings.TrimPrefix(s, "0x")
}

func (p *probe) dmi(field string) string {
	data, ok := p.read(path.Join(hostfs.DMIDir, field), "DMI legacy triggers cannot match it")
	if !ok {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// drivers lists the names under /sys/bus/*/drivers, sorted and unique.
func (p *probe) drivers() []string {
	seen := map[string]bool{}
	buses, err := p.root.ReadDir(hostfs.SysBusDir)
	if err != nil {
		if isNotExist(err) {
			p.problem("%s is missing: bound drivers are unknown, so driver legacy triggers cannot match.", hostfs.SysBusDir)
		} else {
			p.unreadable("%s: %s: bound drivers are unknown; check that sysfs is mounted and readable", hostfs.SysBusDir, errText(err))
		}
		return []string{}
	}
walk:
	for _, bus := range buses {
		drivers, err := p.root.ReadDir(path.Join(hostfs.SysBusDir, bus.Name(), "drivers"))
		if err != nil {
			continue // buses without drivers are normal
		}
		for _, d := range drivers {
			if len(seen) >= maxDrivers {
				p.problem("%s holds more than %d drivers: only the first %d were read.", hostfs.SysBusDir, maxDrivers, maxDrivers)
				break walk
			}
			seen[d.Name()] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
