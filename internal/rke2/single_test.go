package rke2

import "testing"

// The operator's prefer-bundled-bin is found wherever they set it once our
// drop-in is merged too: in config.yaml or a drop-in before ours (which
// ours, merged later, hides from Origin) and in one after ours; without
// any, ours is not taken for theirs.
func TestLastExceptFindsTheOperatorsSetting(t *testing.T) {
	const main = "/etc/rancher/k3s/config.yaml"
	ours := DropInPath(main)
	file := func(p string, v any) File { return File{Path: p, Values: map[string]any{KeyPreferBundledBin: v}} }
	other := File{Path: main, Values: map[string]any{"node-name": "edge-1"}}
	for _, c := range []struct {
		name      string
		files     []File
		wantFile  string
		wantValue string
	}{
		{"main config", []File{file(main, false), file(ours, true)}, main, "false"},
		{"earlier drop-in", []File{other, file("/etc/rancher/k3s/config.yaml.d/50-local.yaml", false), file(ours, true)}, "/etc/rancher/k3s/config.yaml.d/50-local.yaml", "false"},
		{"later drop-in", []File{file(ours, true), file("/etc/rancher/k3s/config.yaml.d/90-local.yaml", false)}, "/etc/rancher/k3s/config.yaml.d/90-local.yaml", "false"},
		{"the last of two", []File{file(main, true), file("/etc/rancher/k3s/config.yaml.d/10-a.yaml", false), file(ours, true)}, "/etc/rancher/k3s/config.yaml.d/10-a.yaml", "false"},
		{"ours alone", []File{other, file(ours, true)}, "", ""},
		{"nobody", []File{other}, "", ""},
	} {
		got, ok := Merge(c.files).LastExcept(KeyPreferBundledBin, ours)
		if ok != (c.wantFile != "") || got.File != c.wantFile || got.Value != c.wantValue {
			t.Errorf("%s: %+v (ok %v), want %s in %q", c.name, got, ok, c.wantValue, c.wantFile)
		}
	}
	// A hand-built Effective (no history) answers from Origin.
	hand := Effective{Values: map[string]any{KeyPreferBundledBin: true}, Origin: map[string]string{KeyPreferBundledBin: ours}}
	if s, ok := hand.LastExcept(KeyPreferBundledBin, ours); ok {
		t.Errorf("hand-built, set by ours: %+v", s)
	}
	hand.Origin[KeyPreferBundledBin] = main
	if s, ok := hand.LastExcept(KeyPreferBundledBin, ours); !ok || s.File != main || s.Value != "true" {
		t.Errorf("hand-built, set by main: %+v %v", s, ok)
	}
}
