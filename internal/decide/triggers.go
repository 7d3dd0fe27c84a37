package decide

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// matchTriggers returns, in config order, one phrase per legacy trigger
// that matches this host, e.g. `PCI device 0000:01:00.0 (1b4b:9235) matches
// legacy_triggers.pci_ids "1b4b:9235"`.
func matchTriggers(t config.LegacyTriggers, f facts.Facts) []string {
	var out []string
	names := moduleAndDriverNames(f)
	for _, pat := range t.Modules {
		for _, n := range names {
			if ok, _ := path.Match(pat, n); ok {
				out = append(out, fmt.Sprintf("module or driver %q matches legacy_triggers.modules %q", n, pat))
				break
			}
		}
	}
	for _, id := range t.PCIIDs {
		for _, dev := range f.Hardware.PCI {
			if strings.ToLower(dev.Vendor+":"+dev.Device) == id {
				out = append(out, fmt.Sprintf("PCI device %s (%s) matches legacy_triggers.pci_ids %q", dev.Address, id, id))
				break
			}
		}
	}
	for _, pat := range t.DMI {
		for _, field := range []struct{ name, value string }{
			{"DMI vendor", f.Hardware.DMIVendor}, {"DMI product", f.Hardware.DMIProduct},
		} {
			if field.value == "" {
				continue
			}
			if ok, _ := path.Match(pat, field.value); ok {
				out = append(out, fmt.Sprintf("%s %q matches legacy_triggers.dmi %q", field.name, field.value, pat))
				break
			}
		}
	}
	for _, pat := range t.DeviceTree {
		if m := matchDeviceTree(pat, f.Hardware); m != "" {
			out = append(out, fmt.Sprintf("%s matches legacy_triggers.device_tree %q", m, pat))
		}
	}
	return out
}

// matchDeviceTree names the first of the device tree's model and
// compatible names (most specific first) that pat matches, "" for none.
func matchDeviceTree(pat string, hw facts.Hardware) string {
	if hw.DeviceTreeModel != "" {
		if ok, _ := path.Match(pat, hw.DeviceTreeModel); ok {
			return fmt.Sprintf("device tree model %q", hw.DeviceTreeModel)
		}
	}
	for _, c := range hw.DeviceTreeCompatible {
		if ok, _ := path.Match(pat, c); ok {
			return fmt.Sprintf("device tree compatible %q", c)
		}
	}
	return ""
}

// moduleAndDriverNames are the loaded modules, bound drivers and PCI
// drivers, with "-" folded to "_" as the config's patterns are, sorted and
// unique so that the first match reported is always the same.
func moduleAndDriverNames(f facts.Facts) []string {
	var names []string
	add := func(n string) {
		if n != "" {
			names = append(names, strings.ReplaceAll(n, "-", "_"))
		}
	}
	for _, m := range f.Modules.Loaded {
		add(m)
	}
	for _, d := range f.Hardware.Drivers {
		add(d)
	}
	for _, dev := range f.Hardware.PCI {
		add(dev.Driver)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
