package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// rootWith builds a fixture root holding the config file (nil: no file).
func rootWith(t *testing.T, yaml *string) hostfs.Root {
	t.Helper()
	dir := t.TempDir()
	if yaml != nil {
		p := filepath.Join(dir, hostfs.ConfigFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hostfs.New(dir)
}

func ptr(s string) *string { return &s }

func TestDefaults(t *testing.T) {
	c, err := Load(rootWith(t, nil), hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Backend:           Auto,
		BackendSource:     SourceAuto,
		Prefer:            []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy},
		LegacyTriggers:    LegacyTriggers{Modules: []string{}, PCIIDs: []string{}, DMI: []string{}, DeviceTree: []string{}},
		RespectRKE2Config: true,
		KubeProxy:         KubeProxy{ExtraArgs: []string{}},
		NodeLabel:         true,
		OnFailure:         OnFailureWarn,
		Verify:            Verify{Wait: Duration(5 * time.Minute), TextfileDir: "/var/lib/prometheus/node-exporter", NodeFeatureFile: true, NodeCondition: true},
		CNI:               CNI{HelmChartConfig: CNIPrint},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load without a file:\n got %+v\nwant %+v", c, want)
	}
	if d := Defaults(); !reflect.DeepEqual(d, want) {
		t.Errorf("Defaults():\n got %+v\nwant %+v", d, want)
	}
}

func TestFileValues(t *testing.T) {
	c, err := Load(rootWith(t, ptr(`
backend: iptables-legacy
prefer: [nftables, iptables-nft]
legacy_triggers:
  modules: [synobios, "mv-*"]
  pci_ids: ["1B4B:9235", "0x8086:0x1c02"]
  dmi: ["Synology*"]
  device_tree: ["synology,ds418*", "QNAP TS-*"]
respect_rke2_config: false
kube_proxy:
  extra_args: ["--iptables-min-sync-period=1s", "nodeport-addresses=10.0.0.0/8,192.168.0.0/16"]
node_label: no
on_failure: block
verify:
  wait: 90s
  textfile_dir: ""
  node_feature_file: no
  node_condition: false
cni:
  helmchartconfig: write
`)), hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Backend:       "iptables-legacy",
		BackendSource: SourceConfig,
		Prefer:        []backend.Backend{backend.NFTables, backend.IptablesNFT},
		LegacyTriggers: LegacyTriggers{
			Modules:    []string{"synobios", "mv_*"},
			PCIIDs:     []string{"1b4b:9235", "8086:1c02"},
			DMI:        []string{"Synology*"},
			DeviceTree: []string{"synology,ds418*", "QNAP TS-*"},
		},
		KubeProxy: KubeProxy{ExtraArgs: []string{"iptables-min-sync-period=1s", "nodeport-addresses=10.0.0.0/8,192.168.0.0/16"}},
		OnFailure: OnFailureBlock,
		Verify:    Verify{Wait: Duration(90 * time.Second)},
		CNI:       CNI{HelmChartConfig: CNIWrite},
		File:      hostfs.ConfigFile,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestEmptyAndCommentedFile(t *testing.T) {
	for _, text := range []string{"", "# nothing\n", "legacy_triggers:\n  modules:\n  # - synobios\n"} {
		c, err := Load(rootWith(t, ptr(text)), hostfs.ConfigFile, nil, nil)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		d := Defaults()
		d.File = hostfs.ConfigFile
		if !reflect.DeepEqual(c, d) {
			t.Errorf("%q: got %+v, want the defaults", text, c)
		}
	}
}

func TestPrecedence(t *testing.T) {
	file := ptr("backend: iptables-nft\non_failure: block\n")
	tests := []struct {
		name       string
		env        []string
		cmdline    []string
		wantB      string
		wantSource string
	}{
		{"file", nil, nil, "iptables-nft", SourceConfig},
		{"env over file", []string{"RKE2_PROXY_BACKEND=iptables-legacy"}, nil, "iptables-legacy", SourceEnv},
		{"empty env is unset", []string{"RKE2_PROXY_BACKEND="}, nil, "iptables-nft", SourceConfig},
		{"cmdline over env", []string{"RKE2_PROXY_BACKEND=iptables-legacy"}, []string{"quiet", "rke2.proxy_backend=nftables"}, "nftables", SourceCmdline},
		{"cmdline auto", nil, []string{"rke2.proxy_backend=auto"}, "auto", SourceCmdline},
		{"last cmdline word wins", nil, []string{"rke2.proxy_backend=off", "rke2.proxy_backend=\"iptables-legacy\""}, "iptables-legacy", SourceCmdline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(rootWith(t, file), hostfs.ConfigFile, tt.env, tt.cmdline)
			if err != nil {
				t.Fatal(err)
			}
			if c.Backend != tt.wantB || c.BackendSource != tt.wantSource {
				t.Errorf("backend %q from %q, want %q from %q", c.Backend, c.BackendSource, tt.wantB, tt.wantSource)
			}
			if c.OnFailure != OnFailureBlock {
				t.Errorf("on_failure %q: the file's value was lost", c.OnFailure)
			}
		})
	}
}

func TestEnvKeys(t *testing.T) {
	c, err := Load(rootWith(t, ptr("on_failure: block\n")), hostfs.ConfigFile, []string{
		"PATH=/usr/bin",
		"RKE2_PROXY_BACKEND_ROOT=/somewhere", // --root's, not ours
		"RKE2_PROXY_BACKEND_ON_FAILURE=warn",
		"RKE2_PROXY_BACKEND_NODE_LABEL=false",
		"RKE2_PROXY_BACKEND_RESPECT_RKE2_CONFIG=0",
		"RKE2_PROXY_BACKEND_PREFER=iptables-legacy, iptables-nft",
		"RKE2_PROXY_BACKEND_VERIFY_WAIT=2m",
		"RKE2_PROXY_BACKEND_VERIFY_TEXTFILE_DIR=/run/metrics/",
		"RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_PCI_IDS=1b4b:9235,8086:1C02",
		"RKE2_PROXY_BACKEND_KUBE_PROXY_EXTRA_ARGS=iptables-sync-period=10s nodeport-addresses=10.0.0.0/8,fd00::/8",
		"RKE2_PROXY_BACKEND_LEGACY_TRIGGERS_DEVICE_TREE=synology,ds418  qnap,*",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.OnFailure != OnFailureWarn || c.NodeLabel || c.RespectRKE2Config || c.Verify.Wait != Duration(2*time.Minute) ||
		c.Verify.TextfileDir != "/run/metrics" || c.BackendSource != SourceAuto {
		t.Errorf("scalars not taken from the environment: %+v", c)
	}
	if want := []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT}; !reflect.DeepEqual(c.Prefer, want) {
		t.Errorf("prefer %v, want %v", c.Prefer, want)
	}
	if want := []string{"1b4b:9235", "8086:1c02"}; !reflect.DeepEqual(c.LegacyTriggers.PCIIDs, want) {
		t.Errorf("pci_ids %v, want %v", c.LegacyTriggers.PCIIDs, want)
	}
	if want := []string{"iptables-sync-period=10s", "nodeport-addresses=10.0.0.0/8,fd00::/8"}; !reflect.DeepEqual(c.KubeProxy.ExtraArgs, want) {
		t.Errorf("extra_args %v, want %v", c.KubeProxy.ExtraArgs, want)
	}
	// Device-tree names hold commas: the items are separated by spaces.
	if want := []string{"synology,ds418", "qnap,*"}; !reflect.DeepEqual(c.LegacyTriggers.DeviceTree, want) {
		t.Errorf("device_tree %v, want %v", c.LegacyTriggers.DeviceTree, want)
	}
}

// TestShippedExample loads packaging/config.yaml the way a package installs
// it and checks that, as documented, it changes nothing.
func TestShippedExample(t *testing.T) {
	data, err := os.ReadFile("../../packaging/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(rootWith(t, ptr(string(data))), hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatalf("the shipped example does not load: %v", err)
	}
	want := Defaults()
	want.File = hostfs.ConfigFile
	want.BackendSource = SourceConfig // it sets backend: auto explicitly
	if !reflect.DeepEqual(c, want) {
		t.Errorf("the shipped example is not the defaults:\n got %+v\nwant %+v", c, want)
	}
}
