package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// EnvBackend sets the backend from the environment (auto, off or a backend).
const EnvBackend = "RKE2_PROXY_BACKEND"

// envPrefix starts the variables for the other keys: the key path in upper
// case with "." and "_" as "_", e.g. RKE2_PROXY_BACKEND_VERIFY_WAIT.
const envPrefix = EnvBackend + "_"

// CmdlineKey is the kernel command line word that overrides the backend.
const CmdlineKey = "rke2.proxy_backend"

// envIgnored are RKE2_PROXY_BACKEND_* variables that are not config keys:
// the --root default, and the generator's record of its decision (which
// apply inherits as ExecStartPre of the RKE2 unit).
func envIgnored(name string) bool { return name == hostfs.EnvRoot || name == hostfs.EnvDecision }

// envName is the variable for a key path.
func envName(p string) string {
	if p == "backend" {
		return EnvBackend
	}
	return envPrefix + strings.ToUpper(strings.ReplaceAll(p, ".", "_"))
}

// envNames lists every variable the config reads, for error messages.
func envNames() []string {
	var out []string
	for _, s := range settings {
		out = append(out, envName(s.path))
	}
	return out
}

// fromEnv reads RKE2_PROXY_BACKEND and RKE2_PROXY_BACKEND_<KEY>. An empty
// value counts as unset (systemd's Environment=X= clears a variable that
// way). Lists are comma-separated, except kube_proxy.extra_args and
// legacy_triggers.device_tree, which are separated by spaces because
// kube-proxy values such as nodeport-addresses and device-tree names
// ("synology,ds418") contain commas.
func fromEnv(env []string) (map[string]any, error) {
	byName := map[string]setting{}
	for _, s := range settings {
		byName[envName(s.path)] = s
	}
	// Sort so that, of several bad variables, the same one is reported every time.
	sorted := append([]string(nil), env...)
	sort.Strings(sorted)
	out := map[string]any{}
	for _, kv := range sorted {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || (name != EnvBackend && !strings.HasPrefix(name, envPrefix)) || envIgnored(name) {
			continue
		}
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		s, known := byName[name]
		if !known {
			return nil, fmt.Errorf("environment variable %s is not a setting of rke2-proxy-backend (valid: %s, and %s for --root)",
				name, strings.Join(envNames(), ", "), hostfs.EnvRoot)
		}
		val, err := fromEnvValue(s, raw)
		if err != nil {
			return nil, fmt.Errorf("environment variable %s: %w", name, err)
		}
		out[s.path] = val
	}
	return out, nil
}

func fromEnvValue(s setting, raw string) (any, error) {
	if s.kind != kindList {
		return convert(s, raw)
	}
	var items []string
	if s.spaces {
		items = strings.Fields(raw)
	} else {
		for _, item := range strings.Split(raw, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
	}
	return convertList(s, items)
}

// fromCmdline reads rke2.proxy_backend=B|auto|off from the kernel command
// line words; the last one wins, as for every kernel parameter. Errors name
// /proc/cmdline even when the generator read PID 1's arguments inside a
// container: that is where operators set the word.
func fromCmdline(words []string) (map[string]any, error) {
	out := map[string]any{}
	for _, w := range words {
		name, raw, hasValue := strings.Cut(w, "=")
		if name != CmdlineKey {
			continue
		}
		raw = strings.Trim(raw, `"`)
		if !hasValue || raw == "" {
			return nil, fmt.Errorf("%s: %q needs a value: use %s=auto, off, iptables-legacy, iptables-nft or nftables", hostfs.ProcCmdline, w, CmdlineKey)
		}
		v, err := checkBackendChoice(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", hostfs.ProcCmdline, w, err)
		}
		out["backend"] = v
	}
	return out, nil
}

// BackendSetting names the operator's backend setting where an operator
// finds it: the kernel command line, the environment, or the file's key.
func (c Config) BackendSetting() string {
	switch c.BackendSource {
	case SourceCmdline:
		return fmt.Sprintf("%s=%s on the kernel command line", CmdlineKey, c.Backend)
	case SourceEnv:
		return fmt.Sprintf("%s=%s in the environment", EnvBackend, c.Backend)
	}
	file := c.File
	if file == "" {
		file = hostfs.ConfigFile
	}
	return fmt.Sprintf("backend: %s in %s", c.Backend, file)
}
