package dropin

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
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
	for name, d := range map[string]rke2.DropIn{
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
			got, err := Render(d)
			if err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("testdata", name+".yaml"), got)
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
		d := rke2.DropIn{Backend: backend.IptablesNFT, KubeProxyArgs: []string{v}, NodeLabels: []string{v}}
		got, err := Render(d)
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
	for name, d := range map[string]rke2.DropIn{
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
		if got, err := Render(d); err == nil {
			t.Errorf("%s: rendered\n%s\nwant an error", name, got)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"a=b", "a=\"", "a=\\", "a=\u2028", "a=: x", "--v=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := Render(rke2.DropIn{Backend: backend.IptablesLegacy, KubeProxyArgs: []string{v}, KubeProxyEnv: []string{"X=" + v}})
		if err != nil {
			return
		}
		back := parseDropIn(t, got)
		if len(back) != 2 || len(back["kube-proxy-arg+"]) != 1 || back["kube-proxy-arg+"][0] != v || back["kube-proxy-extra-env+"][0] != "X="+v {
			t.Fatalf("value %q: RKE2 would read %q", v, back)
		}
	})
}

// k3s has no kube-proxy-extra-env: the k3s drop-in never carries it, and
// the values are checked as RKE2's are.
func TestRenderK3s(t *testing.T) {
	d := rke2.DropIn{Backend: backend.IptablesLegacy, KubeProxyArgs: []string{"proxy-mode=iptables"}, KubeProxyEnv: []string{"IPTABLES_MODE=legacy"}}
	for _, prefer := range []bool{false, true} {
		data, err := RenderK3s(d, prefer)
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		if strings.Contains(got, rke2.KeyKubeProxyExtraEnv) || !strings.Contains(got, "proxy-mode=iptables") ||
			strings.HasSuffix(got, "prefer-bundled-bin: true\n") != prefer {
			t.Errorf("prefer %v:\n%s", prefer, got)
		}
		f, err := rke2.ParseFile("/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml", data)
		if err != nil {
			t.Fatalf("the k3s drop-in is not config YAML k3s reads: %v\n%s", err, got)
		}
		eff := rke2.Merge([]rke2.File{f})
		if b, _ := eff.Values[rke2.KeyPreferBundledBin].(bool); b != prefer {
			t.Errorf("prefer %v: merged %v", prefer, eff.Values)
		}
	}
	if _, err := RenderK3s(rke2.DropIn{Backend: backend.IptablesNFT, KubeProxyArgs: []string{"x\ny=1"}}, true); err == nil {
		t.Error("a value with a newline rendered")
	}
}

// The k3s drop-in's comments name k3s, whose start runs apply; RKE2's
// keep RKE2's words, and a value that happens to hold them stays as set.
func TestRenderK3sDropInSaysK3s(t *testing.T) {
	label := "note=before every RKE2 start"
	for _, d := range []rke2.DropIn{
		{Backend: backend.IptablesNFT, KubeProxyArgs: []string{"proxy-mode=iptables"}, NodeLabels: []string{label}},
		{Backend: backend.IptablesNFT},
	} {
		k3s, err := RenderK3s(d, false)
		if err != nil {
			t.Fatal(err)
		}
		rke2Data, err := Render(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(k3s), "\n") {
			if strings.HasPrefix(line, "#") && strings.Contains(line, "RKE2") {
				t.Errorf("a k3s drop-in comment names RKE2: %q\n%s", line, k3s)
			}
		}
		if !strings.Contains(string(k3s), "before every k3s start") || !strings.Contains(string(rke2Data), "before every RKE2 start") {
			t.Errorf("headers:\nk3s:\n%s\nRKE2:\n%s", k3s, rke2Data)
		}
		if len(d.NodeLabels) > 0 && !strings.Contains(string(k3s), label) {
			t.Errorf("the node label's value was rewritten:\n%s", k3s)
		}
		if len(d.NodeLabels) == 0 && !strings.Contains(string(k3s), "k3s's own config already pins") {
			t.Errorf("the empty k3s drop-in does not say k3s's config pins everything:\n%s", k3s)
		}
	}
}
