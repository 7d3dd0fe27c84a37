package oracle

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Every minor has a spec only when it needs one, and what a minor's
// oracle lacks is said, never silently dropped.
func TestFitAndBuildEnv(t *testing.T) {
	for m := range specs {
		if !slices.Contains(Minors, m) {
			t.Errorf("specs has %s, which Minors lacks", m)
		}
	}
	for _, b := range backend.All {
		if o, notes, ok := Fit("v1.37", b, Options{Kubelet: true}); !ok || !o.Kubelet || len(notes) != 0 {
			t.Errorf("v1.37 %s: Fit = %+v %q %t, want everything", b, o, notes, ok)
		}
	}
	for _, b := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		if _, notes, ok := Fit("v1.38", b, Options{}); ok || len(notes) != 1 || !strings.Contains(notes[0], "iptables-wrappers") {
			t.Errorf("v1.38 %s: Fit ok=%t notes %q, want left out, saying why", b, ok, notes)
		}
	}
	o, notes, ok := Fit("v1.38", backend.NFTables, Options{Services: 5, Kubelet: true})
	if !ok || o.Kubelet || o.Services != 5 || len(notes) != 1 || !strings.Contains(notes[0], "kubelet") {
		t.Errorf("v1.38 nftables: Fit = %+v %q %t, want it without kubelet's chains, saying so", o, notes, ok)
	}
	if env := BuildEnv("v1.38"); !slices.Contains(env, "GOTOOLCHAIN=go1.27.3") {
		t.Errorf("v1.38's build environment %q lacks its toolchain", env)
	}
	if env := BuildEnv("v1.37"); slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "GOTOOLCHAIN=") }) {
		t.Errorf("v1.37's build environment %q sets a toolchain", env)
	}
}

// The newest minor with an iptables proxier is not 1.38 (nftables only),
// and nftables' newest is the newest minor.
func TestNewestWith(t *testing.T) {
	if got := NewestWith(backend.IptablesLegacy); Lacks(got, backend.IptablesLegacy) != "" || got == "v1.38" {
		t.Errorf("NewestWith(iptables-legacy) = %s", got)
	}
	if got := NewestWith(backend.NFTables); got != Minors[len(Minors)-1] {
		t.Errorf("NewestWith(nftables) = %s, want %s", got, Minors[len(Minors)-1])
	}
}
