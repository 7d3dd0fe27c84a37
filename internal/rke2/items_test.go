package rke2

import (
	"reflect"
	"testing"
)

// Settings carries each item's file and key line through RKE2's merge:
// appends keep earlier items' lines, a replacing key takes them all.
func TestSettingsLines(t *testing.T) {
	parse := func(name, text string) File {
		f, err := ParseFile(name, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	main := parse("/c.yaml", "a: b\nkube-proxy-arg: feature-gates=X=true\n")
	plus := parse("/c.yaml.d/10.yaml", "# x\n\nkube-proxy-arg+:\n  - proxy-mode=ipvs\n  - v=2\n")
	got := Merge([]File{main, plus}).Settings(KeyKubeProxyArg)
	want := []Setting{{"feature-gates=X=true", "/c.yaml", 2}, {"proxy-mode=ipvs", "/c.yaml.d/10.yaml", 3}, {"v=2", "/c.yaml.d/10.yaml", 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings = %+v, want %+v", got, want)
	}
	wipe := parse("/c.yaml.d/20.yaml", "kube-proxy-arg: [v=4]\n")
	got = Merge([]File{main, plus, wipe}).Settings(KeyKubeProxyArg)
	if want := []Setting{{"v=4", "/c.yaml.d/20.yaml", 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a replacing key, Settings = %+v, want %+v", got, want)
	}
	if got := Merge([]File{main}).Settings(KeyKubeProxyArg); !reflect.DeepEqual(got, []Setting{{"feature-gates=X=true", "/c.yaml", 2}}) {
		t.Errorf("a scalar's Settings = %+v", got)
	}
}
