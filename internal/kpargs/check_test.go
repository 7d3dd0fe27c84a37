package kpargs

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

func version(t *testing.T, s string) rke2.KubeVersion {
	t.Helper()
	v, err := rke2.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func settings(items ...string) []rke2.Setting {
	out := make([]rke2.Setting, len(items))
	for i, it := range items {
		out[i] = rke2.Setting{Value: it, File: "/etc/rancher/rke2/config.yaml", Line: 3}
	}
	return out
}

func TestLifecycleFileParses(t *testing.T) {
	facts, err := ParseLifecycle(lifecycleText)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range facts {
		key := f.Kind + " " + f.Gate
		if line, dup := seen[key]; dup {
			t.Errorf("lifecycle.txt lines %d and %d: %s twice", line, f.Line, key)
		}
		seen[key] = f.Line
		if f.Source == "" {
			t.Errorf("lifecycle.txt line %d: no source", f.Line)
		}
		if f.Kind == kindLocked {
			if r, ok := firstFact(kindRemoved, f.Gate); ok && r.Minor <= f.Minor {
				t.Errorf("lifecycle.txt line %d: %s locked from 1.%d but removed in 1.%d", f.Line, f.Gate, f.Minor, r.Minor)
			}
		}
	}
	if _, ok := firstFact(kindRemoved, "NFTablesProxyMode"); !ok {
		t.Error("lifecycle.txt lost NFTablesProxyMode's removal")
	}
}

func TestParseLifecycleNamesTheLine(t *testing.T) {
	for _, bad := range []string{"removed X", "removed X 2.1 src", "removed lower 1.3 src", "locked X 1.3 src", "gone X 1.3 src", "locked X=maybe 1.3 src"} {
		_, err := ParseLifecycle("# c\n\n" + bad + "\n")
		if err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%q: error %v, want one naming line 3", bad, err)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		args          []string
		want          []string // "severity remove" per finding
	}{
		{"1.38 refuses the removed NFTablesProxyMode gate", "v1.38.0+rke2r1", []string{"feature-gates=NFTablesProxyMode=true"},
			[]string{"refuses feature-gates=NFTablesProxyMode=true"}},
		{"with -- and spaces too", "v1.38.0", []string{" --feature-gates= NFTablesProxyMode = true "},
			[]string{"refuses  --feature-gates= NFTablesProxyMode = true "}},
		{"1.37 accepts =true and ignores it (GA, locked)", "v1.37.2", []string{"feature-gates=NFTablesProxyMode=true"},
			[]string{"ignored feature-gates=NFTablesProxyMode=true"}},
		{"1.37 refuses =false (locked to true)", "v1.37.2", []string{"feature-gates=NFTablesProxyMode=false"},
			[]string{"refuses feature-gates=NFTablesProxyMode=false"}},
		{"1.32 takes the gate as meant (beta)", "v1.32.3", []string{"feature-gates=NFTablesProxyMode=true"}, nil},
		{"one pair out of several", "v1.38.0", []string{"feature-gates=Foo=true,NFTablesProxyMode=true"},
			[]string{"refuses NFTablesProxyMode=true"}},
		{"MinimizeIPTablesRestore, removed in 1.30", "v1.34.10", []string{"feature-gates=MinimizeIPTablesRestore=true"},
			[]string{"refuses feature-gates=MinimizeIPTablesRestore=true"}},
		{"a gate newer than the version", "v1.36.3", []string{"feature-gates=KubeProxyIPVS=true"},
			[]string{"refuses feature-gates=KubeProxyIPVS=true"}},
		{"unparsable value, any version", "", []string{"feature-gates=NFTablesProxyMode"},
			[]string{"refuses feature-gates=NFTablesProxyMode"}},
		{"unknown version judges no gate", "", []string{"feature-gates=NFTablesProxyMode=true"}, nil},
		{"ipvs on 1.38 is still on", "v1.38.0", []string{"proxy-mode=ipvs", "ipvs-scheduler=lc"}, nil},
		{"1.37 refuses ipvs with the gate off", "v1.37.2", []string{"feature-gates=KubeProxyIPVS=false", "proxy-mode=ipvs"},
			[]string{"refuses proxy-mode=ipvs"}},
		{"1.40 refuses ipvs by default and ignores its flags", "v1.40.0", []string{"proxy-mode=ipvs", "ipvs-scheduler=lc"},
			[]string{"refuses proxy-mode=ipvs", "ignored ipvs-scheduler=lc"}},
		{"1.40 with KubeProxyIPVS=true runs ipvs", "v1.40.1", []string{"proxy-mode=ipvs", "feature-gates=KubeProxyIPVS=true", "ipvs-scheduler=lc"}, nil},
		{"1.40: only the last proxy-mode counts", "v1.40.0", []string{"proxy-mode=ipvs", "proxy-mode=nftables"}, nil},
		{"1.43 has no ipvs at all", "v1.43.0", []string{"feature-gates=KubeProxyIPVS=true", "--proxy-mode=ipvs"},
			[]string{"refuses --proxy-mode=ipvs"}},
		{"other flags pass", "v1.38.0", []string{"iptables-min-sync-period=1s", "proxy-mode=nftables"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v rke2.KubeVersion
			if tc.version != "" {
				v = version(t, tc.version)
			}
			var got []string
			for _, f := range Check(v, settings(tc.args...)) {
				got = append(got, string(f.Severity)+" "+f.Remove)
				if f.File != "/etc/rancher/rke2/config.yaml" || f.Line != 3 || f.Why == "" {
					t.Errorf("finding %+v lost where it is set or why", f)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Check(%s, %q) = %q, want %q", tc.version, tc.args, got, tc.want)
			}
		})
	}
}

// The sentence an operator reads names the file, the line, the item and
// what to remove, and says the tool does not edit the file.
func TestFindingSentence(t *testing.T) {
	fs := Check(version(t, "v1.38.0+rke2r1"), settings("feature-gates=Foo=true,NFTablesProxyMode=true"))
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	s := fs[0].String()
	for _, want := range []string{"kube-proxy v1.38.0 will not start", "/etc/rancher/rke2/config.yaml line 3", `kube-proxy-arg "feature-gates=Foo=true,NFTablesProxyMode=true"`,
		"Kubernetes 1.38 removed the feature gate NFTablesProxyMode", `remove "NFTablesProxyMode=true" from that item`, "never edits"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}

// The ipvs rows tell one story in order: warned, gated, off, gone
// (KEP-5495; the 1.35 warning is in v1.35.4's kube-proxy, not v1.34.4's).
func TestIPVSLifecycleIsOrdered(t *testing.T) {
	l := IPVS()
	steps := []Fact{l.Deprecated, l.Gate, l.Off, l.Gone}
	want := []int{35, 37, 40, 43}
	for i, f := range steps {
		if f.Minor != want[i] || f.Source == "" {
			t.Errorf("ipvs step %d: %+v, want minor 1.%d with a source", i, f, want[i])
		}
	}
}
