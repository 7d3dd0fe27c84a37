package facts

import (
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
)

// k3sUnits are k3s's units (as distro finds them) in RKE2Unit's shape:
// the generator, apply and switch act on the node's distribution's units,
// and apply asks the binary they run for the version, as on RKE2.
// ConfigFile is K3S_CONFIG_FILE from the unit's environment. Role is read
// from the word after the binary (install.sh's "k3s \ server \").
func (p *probe) k3sUnits() []RKE2Unit {
	units := []RKE2Unit{}
	found := p.opts.Units
	if found == nil {
		found = distro.Find(p.root, p.opts.Distribution).Units
	}
	for _, u := range found {
		data, ok := p.read(u.Path, "this k3s unit's config file is unknown")
		if !ok {
			continue
		}
		parsed := parseUnit(string(data))
		unit := RKE2Unit{Name: u.Name, Path: u.Path, Binary: u.Binary, Role: "agent"}
		if n := len(parsed.execStart); n > 0 {
			unit.execStart = parsed.execStart[n-1]
			if strings.Contains(" "+parsed.execStart[n-1]+" ", " server ") {
				unit.Role = "server"
			}
		}
		unit.ConfigFile = p.unitEnv(u.Name, parsed)["K3S_CONFIG_FILE"]
		unit.IptablesMode = p.k3sEnvSetting(u.Name, u.Path, string(data), "IPTABLES_MODE")
		p.checkIptablesMode(u.Name, unit.IptablesMode)
		units = append(units, unit)
	}
	if len(units) == 0 {
		p.problem("No k3s unit (k3s.service, k3s-agent.service, k3s-<name>.service) in /etc/systemd/system or /usr/lib/systemd/system: k3s is not installed (yet), so there is nothing to configure.")
	}
	return units
}

// k3sAuxTarget is where bin/aux's iptables link points (its base name):
// iptables-detect.sh until k3s-root's first run, then the
// xtables-<mode>-multi that run chose and stuck to; "" when k3s has not
// extracted its binaries yet (or the link cannot be read).
func (p *probe) k3sAuxTarget(dataDir string) string {
	target, err := p.root.Readlink(path.Join(p.opts.Distribution.Profile().AuxDir(dataDir), "iptables"))
	if err != nil {
		return ""
	}
	return path.Base(target)
}
