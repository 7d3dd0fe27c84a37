package facts

import (
	"path"
	"slices"
	"strings"
)

// Host services that fight kube-proxy and the CNI over netfilter rules or
// interfaces (RKE2's known issues). They are read as files: the generator
// has no D-Bus, and an enablement symlink is what the next boot starts.

// WatchedUnits are the units whose enablement is recorded.
var WatchedUnits = []string{
	"firewalld.service", "ufw.service", "nm-cloud-setup.service", "nm-cloud-setup.timer", "NetworkManager.service",
}

// Paths of the services' own configuration.
const (
	SystemdSystemDir = "/etc/systemd/system"
	FirewalldConf    = "/etc/firewalld/firewalld.conf"
	UfwConf          = "/etc/ufw/ufw.conf"
	NMConfDir        = "/etc/NetworkManager/conf.d"
	NMConf           = "/etc/NetworkManager/NetworkManager.conf"
)

// maxWantsDirs bounds the *.wants directories looked into.
const maxWantsDirs = 4096

// HostServices is what the host's own network services are set to do.
type HostServices struct {
	// Enabled lists the WatchedUnits with an enablement symlink in a
	// /etc/systemd/system/*.wants directory (sorted).
	Enabled []string `json:"enabled"`
	// FirewalldFlushAllOnReload is firewalld.conf's FlushAllOnReload
	// ("yes" when the file or key is absent: firewalld's default).
	FirewalldFlushAllOnReload string `json:"firewalld_flush_all_on_reload,omitempty"`
	// UfwEnabled is ufw.conf's ENABLED=yes.
	UfwEnabled bool `json:"ufw_enabled"`
	// NMUnmanaged are the interface-name patterns NetworkManager is told
	// to leave alone (keyfile unmanaged-devices), e.g. "cali*".
	NMUnmanaged []string `json:"nm_unmanaged,omitempty"`
}

// IsEnabled reports whether a watched unit is enabled.
func (h HostServices) IsEnabled(unit string) bool { return slices.Contains(h.Enabled, unit) }

func (p *probe) hostServices() HostServices {
	h := HostServices{Enabled: []string{}}
	dirs, err := p.root.ReadDirMax(SystemdSystemDir, maxWantsDirs)
	if err != nil && !isNotExist(err) {
		p.unreadable("%s: %s: which network services are enabled is unknown; check the directory", SystemdSystemDir, errText(err))
	}
	for _, d := range dirs {
		if !strings.HasSuffix(d.Name(), ".wants") {
			continue
		}
		for _, unit := range WatchedUnits {
			if !slices.Contains(h.Enabled, unit) && p.isLink(path.Join(SystemdSystemDir, d.Name(), unit)) {
				h.Enabled = append(h.Enabled, unit)
			}
		}
	}
	slices.Sort(h.Enabled)
	if h.IsEnabled("firewalld.service") {
		h.FirewalldFlushAllOnReload = "yes"
		if data, ok := p.read(FirewalldConf, "firewalld's FlushAllOnReload is taken as its default, yes"); ok {
			if v, ok := shellKey(string(data), "FlushAllOnReload"); ok {
				h.FirewalldFlushAllOnReload = strings.ToLower(v)
			}
		}
	}
	if data, ok := p.read(UfwConf, "whether ufw is on is unknown"); ok {
		v, _ := shellKey(string(data), "ENABLED")
		h.UfwEnabled = strings.EqualFold(v, "yes")
	}
	h.NMUnmanaged = p.nmUnmanaged()
	return h
}

// nmUnmanaged collects NetworkManager's unmanaged-devices interface-name
// patterns from NetworkManager.conf and conf.d/*.conf.
func (p *probe) nmUnmanaged() []string {
	files := []string{NMConf}
	if entries, err := p.root.ReadDirMax(NMConfDir, maxManifests); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".conf") {
				files = append(files, path.Join(NMConfDir, e.Name()))
			}
		}
	}
	var out []string
	for _, f := range files {
		data, ok := p.read(f, "NetworkManager's unmanaged devices in it are unknown")
		if !ok {
			continue
		}
		out = append(out, UnmanagedPatterns(string(data))...)
	}
	return out
}

// UnmanagedPatterns reads unmanaged-devices= lines of a NetworkManager
// keyfile ("interface-name:cali*;interface-name:flannel*") and returns the
// interface-name patterns.
func UnmanagedPatterns(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "unmanaged-devices" {
			continue
		}
		for _, spec := range strings.Split(v, ";") {
			spec = strings.TrimSpace(spec)
			if name, ok := strings.CutPrefix(spec, "interface-name:"); ok && name != "" {
				out = append(out, strings.TrimPrefix(name, "="))
			}
		}
	}
	return out
}

// shellKey reads KEY=value from a shell-style config (comments skipped,
// quotes removed); the last assignment wins.
func shellKey(text, key string) (value string, ok bool) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, found := strings.Cut(line, "="); found && strings.TrimSpace(k) == key {
			value, ok = strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	return value, ok
}
