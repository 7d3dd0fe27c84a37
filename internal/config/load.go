package config

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Load reads file (a host path under root; a missing file means defaults),
// then the environment (env, as os.Environ), then the kernel command line
// words, highest last. Errors name the file, key and value.
//
// Each source is parsed and validated on its own so that an error names
// where the bad value came from; assemble then layers the validated values
// over the defaults, lowest first.
func Load(root hostfs.Root, file string, env []string, cmdline []string) (Config, error) {
	fileValues, found, err := readFile(root, file)
	if err != nil {
		return Config{}, err
	}
	envValues, err := fromEnv(env)
	if err != nil {
		return Config{}, err
	}
	cmdValues, err := fromCmdline(cmdline)
	if err != nil {
		return Config{}, err
	}

	c := assemble([]layer{{fileValues, SourceConfig}, {envValues, SourceEnv}, {cmdValues, SourceCmdline}})
	if found {
		c.File = file
	}
	return c, nil
}

// Defaults is the configuration when no file, environment or command line
// sets anything.
func Defaults() Config { return assemble(nil) }

// layer is one source's validated values by key path.
type layer struct {
	values map[string]any
	source string
}

// assemble layers validated values over the defaults, lowest first. Each
// layer holds only keys of settings with values of the key's type (string,
// bool, Duration or []string, as convert and convertList make them), so
// a later layer's value simply replaces an earlier one.
func assemble(layers []layer) Config {
	v := make(map[string]any, len(settings))
	for _, s := range settings {
		v[s.path] = s.def
	}
	source := SourceAuto
	for _, l := range layers {
		for k, val := range l.values {
			v[k] = val
		}
		if _, ok := l.values["backend"]; ok {
			source = l.source
		}
	}
	str := func(k string) string { return v[k].(string) }
	list := func(k string) []string { return append([]string{}, v[k].([]string)...) }
	return Config{
		Backend:       str("backend"),
		BackendSource: source,
		Prefer:        toBackends(list("prefer")),
		LegacyTriggers: LegacyTriggers{
			Modules:    list("legacy_triggers.modules"),
			PCIIDs:     list("legacy_triggers.pci_ids"),
			DMI:        list("legacy_triggers.dmi"),
			DeviceTree: list("legacy_triggers.device_tree"),
		},
		RespectRKE2Config: v["respect_rke2_config"].(bool),
		KubeProxy:         KubeProxy{ExtraArgs: list("kube_proxy.extra_args")},
		NodeLabel:         v["node_label"].(bool),
		NodeTaint:         str("node_taint"),
		OnFailure:         str("on_failure"),
		Verify: Verify{
			Wait:            v["verify.wait"].(Duration),
			TextfileDir:     str("verify.textfile_dir"),
			NodeFeatureFile: v["verify.node_feature_file"].(bool),
			NodeCondition:   v["verify.node_condition"].(bool),
		},
		CNI:    CNI{HelmChartConfig: str("cni.helmchartconfig")},
		Census: Census{Interval: v["census.interval"].(Duration)},
	}
}

// readFile parses the config file; found is false when it does not exist.
func readFile(root hostfs.Root, file string) (map[string]any, bool, error) {
	data, err := root.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: cannot read the config file: %w (fix its permissions or remove it to use the defaults)", file, err)
	}
	values, err := parseYAML(file, data)
	if err != nil {
		return nil, false, err
	}
	return values, true, nil
}

// convert turns one raw scalar into the key's typed value after checking it.
func convert(s setting, raw string) (any, error) {
	switch s.kind {
	case kindBool:
		switch strings.ToLower(raw) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean: use true or false", raw)
	case kindDuration:
		if _, err := s.check(raw); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(raw)
		return Duration(d), err
	}
	if s.check == nil {
		return raw, nil
	}
	return s.check(raw)
}

// convertList checks every item of a list key, naming the bad one.
func convertList(s setting, items []string) ([]string, error) {
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		v, err := s.check(item)
		if err != nil {
			return nil, &itemError{index: i, err: err}
		}
		if s.path == "prefer" && v == PreferCheapest && i > 0 {
			return nil, fmt.Errorf("%q must be the first entry: the backends after it are the fallback when nothing was measured", v)
		}
		if s.path == "prefer" && seen[v] {
			return nil, fmt.Errorf("%q is listed twice: list each backend once", v)
		}
		seen[v] = true
		out = append(out, v)
	}
	if s.path == "prefer" && len(out) == 0 {
		return nil, fmt.Errorf("the list is empty: list at least one backend, e.g. [iptables-nft, iptables-legacy]")
	}
	return out, nil
}

func toBackends(names []string) []backend.Backend {
	out := make([]backend.Backend, len(names))
	for i, n := range names {
		out[i] = backend.Backend(n)
	}
	return out
}
