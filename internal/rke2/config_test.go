package rke2

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// writeRoot lays out files (host path -> content) under a temp root.
func writeRoot(t *testing.T, files map[string]string) hostfs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hostfs.New(dir)
}

const mainCfg = hostfs.RKE2ConfigFile
const dropDir = hostfs.RKE2ConfigFile + ".d/"

func TestLoadEffectiveMergesLikeRKE2(t *testing.T) {
	root := writeRoot(t, map[string]string{
		mainCfg: "token: abc\nkube-proxy-arg:\n  - proxy-mode=nftables\nnode-label: a=b\n",
		// 50-rancher sorts before 60; "+" appends, a scalar becomes a list.
		dropDir + "50-rancher.yaml":         "node-label+: c=d\nkube-proxy-arg+: [metrics-bind-address=0.0.0.0:10249]\n",
		dropDir + "60-proxy-backend.yaml":   "kube-proxy-arg+:\n  - --proxy-mode=iptables\nkube-proxy-extra-env+: [IPTABLES_MODE=legacy]\n",
		dropDir + "70-replace.YML":          "token: xyz\n",
		dropDir + "README.txt":              "not: read\n",
		dropDir + "sub.yaml/ignored.yaml":   "dirs: skipped\n",
		"/etc/rancher/rke2/other.yaml":      "never: read\n",
		dropDir + "80-plain-after-plus.yml": "disable-kube-proxy: yes\n",
	})
	eff, err := LoadEffective(root, hostfs.RKE2ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{mainCfg, dropDir + "50-rancher.yaml", dropDir + "60-proxy-backend.yaml", dropDir + "70-replace.YML", dropDir + "80-plain-after-plus.yml"}
	if !reflect.DeepEqual(eff.Files, wantFiles) {
		t.Errorf("files = %q, want %q", eff.Files, wantFiles)
	}
	if got := eff.Strings("node-label"); !reflect.DeepEqual(got, []string{"a=b", "c=d"}) {
		t.Errorf("node-label = %q", got)
	}
	if got := eff.Values["token"]; got != "xyz" || eff.Origin["token"] != dropDir+"70-replace.YML" {
		t.Errorf("token = %v from %s", got, eff.Origin["token"])
	}
	if _, ok := eff.Values["not"]; ok {
		t.Error("a .txt drop-in was read")
	}
	// The last proxy-mode is our drop-in's; skipping it finds the operator's pin.
	if v, f := eff.ProxyMode(); v != "iptables" || f != dropDir+"60-proxy-backend.yaml" {
		t.Errorf("ProxyMode() = %q, %q", v, f)
	}
	if v, f := eff.ProxyMode(dropDir + "60-proxy-backend.yaml"); v != "nftables" || f != mainCfg {
		t.Errorf("ProxyMode(skip ours) = %q, %q", v, f)
	}
	if v, f := eff.IptablesMode(); v != "legacy" || f != dropDir+"60-proxy-backend.yaml" {
		t.Errorf("IptablesMode() = %q, %q", v, f)
	}
	if v, f := eff.DisableKubeProxy(); !v || f != dropDir+"80-plain-after-plus.yml" {
		t.Errorf("DisableKubeProxy() = %v, %q (YAML 1.1 'yes' is true for RKE2)", v, f)
	}
}

func TestMergeReplaceAfterAppend(t *testing.T) {
	files := []File{
		mustParse(t, "a.yaml", "kube-proxy-arg: [x=1]\n"),
		mustParse(t, "b.yaml", "kube-proxy-arg+: [y=2]\n"),
		mustParse(t, "c.yaml", "kube-proxy-arg: z=3\n"),
		mustParse(t, "d.yaml", "kube-proxy-arg+: w=4\n"),
	}
	eff := Merge(files)
	if got := eff.Strings(KeyKubeProxyArg); !reflect.DeepEqual(got, []string{"z=3", "w=4"}) {
		t.Errorf("got %q: a plain key must wipe what earlier files appended", got)
	}
	if got := eff.ItemOrigin[KeyKubeProxyArg]; !reflect.DeepEqual(got, []string{"c.yaml", "d.yaml"}) {
		t.Errorf("item origins %q", got)
	}
	if eff.Origin[KeyKubeProxyArg] != "d.yaml" {
		t.Errorf("origin %q", eff.Origin[KeyKubeProxyArg])
	}
}

func TestMergeAppendWithoutEarlierValueKeepsScalar(t *testing.T) {
	// k3s stores the raw value when nothing was set before, even for "key+".
	eff := Merge([]File{mustParse(t, "a.yaml", "node-name+: n1\n")})
	if eff.Values["node-name"] != "n1" {
		t.Errorf("got %#v", eff.Values["node-name"])
	}
}

func TestMergeOrderWithinOneFile(t *testing.T) {
	eff := Merge([]File{mustParse(t, "a.yaml", "k+: [b]\nk: [a]\nk+: [c]\n")})
	if got := eff.Strings("k"); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("got %q", got)
	}
}

func TestMergeHandBuiltFiles(t *testing.T) {
	eff := Merge([]File{
		{Path: "a", Values: map[string]any{"l": []any{"x", 1, true}, "n": nil}},
		{Path: "b", Values: map[string]any{"l+": "y", "n+": []any{"z"}}},
	})
	if got := eff.Strings("l"); !reflect.DeepEqual(got, []string{"x", "1", "true", "y"}) {
		t.Errorf("l = %q", got)
	}
	if got := eff.Strings("n"); !reflect.DeepEqual(got, []string{"z"}) {
		t.Errorf("n = %q (an empty value appends as nothing)", got)
	}
}

func TestReadFilesDropInsWithoutMainFile(t *testing.T) {
	root := writeRoot(t, map[string]string{"/opt/rke2/cfg.yaml.d/10-a.yaml": "write-kubeconfig-mode: \"0644\"\n"})
	eff, err := LoadEffective(root, "/opt/rke2/cfg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if eff.Values["write-kubeconfig-mode"] != "0644" || len(eff.Files) != 1 {
		t.Errorf("got %+v", eff)
	}
}

func TestReadFilesNothingThere(t *testing.T) {
	eff, err := LoadEffective(hostfs.New(t.TempDir()), hostfs.RKE2ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(eff.Files) != 0 || len(eff.Values) != 0 {
		t.Errorf("got %+v", eff)
	}
}

func TestBadYAMLNamesFileAndLine(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":    "a: b\nkube-proxy-arg: [x\nc: d\n",
		"not-a-map": "- a\n- b\n",
		"tab":       "a: b\n\tc: d\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := writeRoot(t, map[string]string{dropDir + "10-bad.yaml": content})
			_, err := LoadEffective(root, hostfs.RKE2ConfigFile)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, dropDir+"10-bad.yaml") || !strings.Contains(msg, "line ") {
				t.Errorf("error %q does not name the file and line", msg)
			}
		})
	}
}

func TestParseFileScalars(t *testing.T) {
	f := mustParse(t, "x", "a: 1\nb: 1.5\nc: true\nd: \"yes\"\ne: off\nf:\ng: [on, 2, \"s\"]\nh: {x: 1}\ni: &anc v\nj: *anc\n")
	want := map[string]any{"a": 1, "b": 1.5, "c": true, "d": "yes", "e": false, "f": nil,
		"g": []string{"true", "2", "s"}, "h": "map[x:1]", "i": "v", "j": "v"}
	if !reflect.DeepEqual(f.Values, want) {
		t.Errorf("got  %#v\nwant %#v", f.Values, want)
	}
}

func TestBool(t *testing.T) {
	eff := Merge([]File{mustParse(t, "x", "a: true\nb: \"false\"\nc: maybe\nd: [true, \"0\"]\n")})
	for key, want := range map[string][2]bool{"a": {true, true}, "b": {false, true}, "c": {false, false}, "d": {false, true}, "zz": {false, false}} {
		v, ok := eff.Bool(key)
		if v != want[0] || ok != want[1] {
			t.Errorf("Bool(%s) = %v, %v; want %v", key, v, ok, want)
		}
	}
}

func mustParse(t testing.TB, name, content string) File {
	t.Helper()
	f, err := ParseFile(name, []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func FuzzMergeConfig(f *testing.F) {
	f.Add([]byte("kube-proxy-arg: [proxy-mode=nftables]\n"), []byte("kube-proxy-arg+: --proxy-mode=iptables\n"))
	f.Add([]byte("a: 1\na+: [2]\n"), []byte("a: &x [y]\nb: *x\n"))
	f.Add([]byte("kube-proxy-extra-env: IPTABLES_MODE=nft=x\n"), []byte("disable-kube-proxy: on\n"))
	f.Add([]byte("- list\n"), []byte("{}"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var files []File
		for i, data := range [][]byte{a, b} {
			file, err := ParseFile([]string{"a", "b"}[i], data)
			if err != nil {
				if !strings.Contains(err.Error(), "RKE2 config "+[]string{"a", "b"}[i]) {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			files = append(files, file)
		}
		eff := Merge(files)
		for k, v := range eff.Values {
			if eff.Origin[k] == "" {
				t.Fatalf("key %q has no origin", k)
			}
			if list, ok := v.([]string); ok && len(eff.ItemOrigin[k]) != len(list) {
				t.Fatalf("key %q: %d items, %d origins", k, len(list), len(eff.ItemOrigin[k]))
			}
		}
		eff.ProxyMode()
		eff.IptablesMode()
		eff.DisableKubeProxy()
	})
}
