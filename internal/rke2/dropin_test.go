package rke2

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
)

// parseDropIn reads rendered YAML back the way RKE2 would see it.
func parseDropIn(t testing.TB, data []byte) map[string][]string {
	t.Helper()
	var m map[string][]string
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("rendered drop-in is not YAML: %v\n%s", err, data)
	}
	return m
}

func TestRenderDropInGolden(t *testing.T) {
	for name, d := range map[string]DropIn{
		"legacy": {
			Backend:       backend.IptablesLegacy,
			KubeProxyArgs: []string{"proxy-mode=iptables"},
			KubeProxyEnv:  []string{"IPTABLES_MODE=legacy"},
			NodeLabels:    []string{"rke2-proxy-backend/backend=iptables-legacy"},
		},
		"nftables": {
			Backend:       backend.NFTables,
			KubeProxyArgs: []string{"proxy-mode=nftables", "iptables-min-sync-period=1s"},
			KubeProxyEnv:  []string{"IPTABLES_MODE=nft"},
		},
		"respected": {Backend: backend.IptablesNFT},
		"tainted": {
			Backend:      backend.IptablesLegacy,
			KubeProxyEnv: []string{"IPTABLES_MODE=legacy"},
			NodeLabels:   []string{"rke2-proxy-backend/backend=iptables-legacy"},
			NodeTaints:   []string{"rke2-proxy-backend/backend=iptables-legacy:NoSchedule"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := RenderDropIn(d)
			if err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("testdata", "dropin", name+".yaml"), got)
			back := parseDropIn(t, got)
			want2 := map[string][]string{}
			if len(d.KubeProxyArgs) > 0 {
				want2["kube-proxy-arg+"] = d.KubeProxyArgs
			}
			if len(d.KubeProxyEnv) > 0 {
				want2["kube-proxy-extra-env+"] = d.KubeProxyEnv
			}
			if len(d.NodeLabels) > 0 {
				want2["node-label+"] = d.NodeLabels
			}
			if len(d.NodeTaints) > 0 {
				want2["node-taint+"] = d.NodeTaints
			}
			if len(want2) == 0 {
				want2 = nil
			}
			if !reflect.DeepEqual(back, want2) {
				t.Errorf("RKE2 would read %v, want %v", back, want2)
			}
		})
	}
}

// Hostile values stay single list items: no new key, no YAML tag or anchor,
// no type other than string.
func TestRenderDropInNoInjection(t *testing.T) {
	for _, v := range []string{
		`iptables-sync-period=30s" , "x`,
		"a=b\nkube-proxy-image: evil",
		"a=b: c",
		"a=- x",
		"a=#comment",
		"a=&anchor *alias !!binary",
		`a='single' "double" \back`,
		"a=%n $HOME ${X}",
		"a=ünïcödé \u2028",
		"a={x: 1}",
		"a=[1, 2]",
	} {
		d := DropIn{Backend: backend.IptablesNFT, KubeProxyArgs: []string{v}, NodeLabels: []string{v}}
		got, err := RenderDropIn(d)
		if strings.ContainsAny(v, "\n") {
			if err == nil {
				t.Errorf("value %q with a newline was accepted:\n%s", v, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		back := parseDropIn(t, got)
		want := map[string][]string{"kube-proxy-arg+": {v}, "node-label+": {v}}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("value %q: RKE2 would read %q", v, back)
		}
	}
}

func TestRenderDropInRefuses(t *testing.T) {
	for name, d := range map[string]DropIn{
		"bad backend":    {Backend: "modern"},
		"arg no equals":  {Backend: backend.IptablesNFT, KubeProxyArgs: []string{"proxy-mode"}},
		"arg bad name":   {Backend: backend.IptablesNFT, KubeProxyArgs: []string{"proxy mode=x"}},
		"env bad name":   {Backend: backend.IptablesNFT, KubeProxyEnv: []string{"1X=y"}},
		"env empty":      {Backend: backend.IptablesNFT, KubeProxyEnv: []string{""}},
		"label newline":  {Backend: backend.IptablesNFT, NodeLabels: []string{"a=b\nc"}},
		"taint effect":   {Backend: backend.IptablesNFT, NodeTaints: []string{"a=b:Never"}},
		"taint no value": {Backend: backend.IptablesNFT, NodeTaints: []string{"a:NoSchedule"}},
		"tab":            {Backend: backend.IptablesNFT, KubeProxyArgs: []string{"a=\tb"}},
	} {
		if got, err := RenderDropIn(d); err == nil {
			t.Errorf("%s: rendered\n%s\nwant an error", name, got)
		}
	}
}

func TestDropInPath(t *testing.T) {
	for in, want := range map[string]string{
		hostfs.RKE2ConfigFile:          "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml",
		"/opt/rke2/cfg.yaml":           "/opt/rke2/cfg.yaml.d/60-proxy-backend.yaml",
		"etc/x/../rancher/config.yaml": "/etc/rancher/config.yaml.d/60-proxy-backend.yaml",
	} {
		if got := DropInPath(in); got != want {
			t.Errorf("DropInPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLaterOverrides(t *testing.T) {
	dir := hostfs.RKE2ConfigFile + ".d/"
	files := []File{
		{Path: hostfs.RKE2ConfigFile, Values: map[string]any{"kube-proxy-arg": []string{"a=b"}}},
		{Path: dir + "50-rancher.yaml", Values: map[string]any{"kube-proxy-arg": "x=y"}},
		{Path: dir + DropInName, Values: map[string]any{"kube-proxy-arg+": []string{"proxy-mode=iptables"}}},
		{Path: dir + "70-append.yaml", Values: map[string]any{"kube-proxy-arg+": "v=2"}},
		{Path: dir + "90-wipe.yaml", Values: map[string]any{"kube-proxy-extra-env": "A=b", "node-label": "x=y"}},
	}
	got := LaterOverrides(files, hostfs.RKE2ConfigFile, "RKE2", []string{KeyKubeProxyArg, KeyKubeProxyExtraEnv})
	if len(got) != 1 || !strings.Contains(got[0], "90-wipe.yaml") || !strings.Contains(got[0], `"kube-proxy-extra-env"`) {
		t.Errorf("LaterOverrides = %q, want one warning about 90-wipe.yaml's kube-proxy-extra-env", got)
	}
}

func FuzzRenderDropIn(f *testing.F) {
	for _, s := range []string{"a=b", "a=\"", "a=\\", "a=\u2028", "a=: x", "--v=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := RenderDropIn(DropIn{Backend: backend.IptablesLegacy, KubeProxyArgs: []string{v}, KubeProxyEnv: []string{"X=" + v}})
		if err != nil {
			return
		}
		back := parseDropIn(t, got)
		if len(back) != 2 || len(back["kube-proxy-arg+"]) != 1 || back["kube-proxy-arg+"][0] != v || back["kube-proxy-extra-env+"][0] != "X="+v {
			t.Fatalf("value %q: RKE2 would read %q", v, back)
		}
	})
}
