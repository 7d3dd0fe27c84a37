package kpargs

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// FuzzCheckFeatureGates: for one --feature-gates item, Check refuses it
// exactly when kube-proxy's parser refuses the value or some single pair
// of it is refused on its own (each pair is judged alone, so a value is as
// bad as its worst pair); every finding's Remove is the item or one of its
// pairs as written, so the advice always names text that is in the file.
func FuzzCheckFeatureGates(f *testing.F) {
	for _, seed := range []string{"NFTablesProxyMode=true", "A=true,NFTablesProxyMode=false", "KubeProxyIPVS=true,,WinDSR=false", "NFTablesProxyMode", " MinimizeIPTablesRestore = 1 "} {
		f.Add(seed, 38)
		f.Add(seed, 36)
	}
	f.Fuzz(func(t *testing.T, value string, minor int) {
		if minor < 0 || minor > 60 {
			return
		}
		v := rke2.KubeVersion{Major: 1, Minor: minor, Patch: 0}
		item := "feature-gates=" + value
		findings := Check(v, []rke2.Setting{{Value: item}})
		_, seen := flag(item) // what kube-proxy's --feature-gates gets
		gates, err := ParseGates(seen)
		want := err != nil
		for _, g := range gates {
			want = want || len(Refusing(Check(v, []rke2.Setting{{Value: "feature-gates=" + g.Text}}))) > 0
		}
		if got := len(Refusing(findings)) > 0; got != want {
			t.Fatalf("Check(1.%d, %q) refuses: %v, want %v (%+v)", minor, item, got, want, findings)
		}
		for _, fd := range findings {
			if fd.Remove != item && !strings.Contains(item, fd.Remove) {
				t.Fatalf("finding %+v: Remove is not text of %q", fd, item)
			}
		}
	})
}
