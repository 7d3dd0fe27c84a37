package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestKeysMatchTheLoader(t *testing.T) {
	keys := Keys()
	if len(keys) != len(settings) {
		t.Fatalf("Keys() has %d keys, the loader %d", len(keys), len(settings))
	}
	byPath := map[string]Key{}
	for _, k := range keys {
		byPath[k.Path] = k
		if k.Type == "" || k.Default == "" || !strings.HasPrefix(k.Env, EnvBackend) {
			t.Errorf("%+v: empty type or default, or an environment variable outside %s*", k, EnvBackend)
		}
	}
	for path, want := range map[string]Key{
		"backend":               {Path: "backend", Type: "string", Default: "auto", Env: "RKE2_PROXY_BACKEND"},
		"prefer":                {Path: "prefer", Type: "list of strings", Default: "[iptables-nft, iptables-legacy]", Env: "RKE2_PROXY_BACKEND_PREFER"},
		"legacy_triggers.dmi":   {Path: "legacy_triggers.dmi", Type: "list of strings", Default: "[]", Env: "RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_DMI"},
		"node_label":            {Path: "node_label", Type: "boolean", Default: "true", Env: "RKE2_PROXY_BACKEND_NODE_LABEL"},
		"node_taint":            {Path: "node_taint", Type: "string", Default: `""`, Env: "RKE2_PROXY_BACKEND_NODE_TAINT"},
		"verify.wait":           {Path: "verify.wait", Type: "duration", Default: "5m", Env: "RKE2_PROXY_BACKEND_VERIFY_WAIT"},
		"verify.textfile_dir":   {Path: "verify.textfile_dir", Type: "string", Default: "/var/lib/prometheus/node-exporter", Env: "RKE2_PROXY_BACKEND_VERIFY_TEXTFILE_DIR"},
		"verify.node_condition": {Path: "verify.node_condition", Type: "boolean", Default: "true", Env: "RKE2_PROXY_BACKEND_VERIFY_NODE_CONDITION"},
		"kube_proxy.extra_args": {Path: "kube_proxy.extra_args", Type: "list of strings", Default: "[]", Env: "RKE2_PROXY_BACKEND_KUBE_PROXY_EXTRA_ARGS"},
	} {
		if got := byPath[path]; got != want {
			t.Errorf("Keys()[%s] = %+v, want %+v", path, got, want)
		}
	}
	// The documented defaults, written out as a config file, load to
	// exactly the built-in defaults.
	var yaml strings.Builder
	section := ""
	for _, k := range keys {
		head, leaf, nested := strings.Cut(k.Path, ".")
		if !nested {
			fmt.Fprintf(&yaml, "%s: %s\n", k.Path, k.Default)
			section = ""
			continue
		}
		if head != section {
			fmt.Fprintf(&yaml, "%s:\n", head)
			section = head
		}
		fmt.Fprintf(&yaml, "  %s: %s\n", leaf, k.Default)
	}
	c, err := Load(rootWith(t, ptr(yaml.String())), hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatalf("the documented defaults do not load:\n%s\n%v", yaml.String(), err)
	}
	c.File, c.BackendSource = "", SourceAuto
	if !reflect.DeepEqual(c, Defaults()) {
		t.Errorf("the documented defaults load to\n%+v\nwant the built-in defaults\n%+v\nfrom:\n%s", c, Defaults(), yaml.String())
	}
}
