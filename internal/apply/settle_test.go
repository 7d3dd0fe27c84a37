package apply

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// probed is what the shared pipeline hands apply: the probe of h and the
// decision on it with the default config.
func probed(h *testhost.Host) Input {
	f := facts.Probe(h.Root(), facts.Options{})
	c := config.Defaults()
	return Input{Facts: f, Config: c, Decision: decide.Decide(f, c)}
}

func TestSettleWithoutForceOrEnvKeepsTheDecision(t *testing.T) {
	h := testhost.New(t).Debian12()
	in := probed(h)
	got, mainFile, err := Settle(h.Root(), in, "", "")
	if err != nil || mainFile != hostfs.RKE2ConfigFile || !reflect.DeepEqual(got, in) {
		t.Errorf("Settle = %+v, %q, %v; want the input unchanged and RKE2's default config", got.Decision, mainFile, err)
	}
}

// RKE2_CONFIG_FILE names the file RKE2 reads: the decision is made on it,
// and the drop-in goes next to it.
func TestSettleDecidesOnRKE2ConfigFile(t *testing.T) {
	const moved = "/etc/rke2-elsewhere/config.yaml"
	h := testhost.New(t).Debian12().File(moved, "disable-kube-proxy: true\n")
	in := probed(h)
	if in.Decision.Disabled {
		t.Fatal("the probed config already disables kube-proxy; the test proves nothing")
	}
	got, mainFile, err := Settle(h.Root(), in, "", moved)
	if err != nil || mainFile != moved || got.Facts.RKE2.ConfigFile != moved {
		t.Fatalf("Settle = main file %q, facts' %q, %v; want %s", mainFile, got.Facts.RKE2.ConfigFile, err, moved)
	}
	if !got.Decision.Disabled {
		t.Errorf("decision %s: disable-kube-proxy in %s was not read; reasons %q", got.Decision.Backend, moved, got.Decision.Reasons)
	}
}

func TestSettleRefusesAnUnreadableRKE2ConfigFile(t *testing.T) {
	const moved = "/etc/rke2-elsewhere/config.yaml"
	h := testhost.New(t).Debian12().File(moved, "kube-proxy-arg: [unclosed\n")
	_, _, err := Settle(h.Root(), probed(h), "", moved)
	if err == nil || !strings.HasPrefix(err.Error(), "RKE2_CONFIG_FILE="+moved+": ") {
		t.Errorf("Settle error %v; want one naming RKE2_CONFIG_FILE and the file", err)
	}
}

// On k3s the same refusal names K3S_CONFIG_FILE and k3s's config, not
// RKE2's.
func TestSettleRefusesAnUnreadableK3sConfigFile(t *testing.T) {
	const moved = "/etc/k3s-elsewhere/config.yaml"
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").File(moved, "kube-proxy-arg: [unclosed\n")
	in := probed(h)
	in.Facts.RKE2.Distribution = distro.Kind("k3s")
	_, _, err := Settle(h.Root(), in, "", moved)
	if err == nil || !strings.HasPrefix(err.Error(), "K3S_CONFIG_FILE="+moved+": k3s config "+moved) {
		t.Errorf("Settle error %v; want one naming K3S_CONFIG_FILE and k3s's config file", err)
	}
}

// With --backend the generator has already weighed this boot's plan: a
// second apply must not keep it just because it is the plan, or the reasons
// (and the plan file) would change on every run. Carrying the generator's
// plan out is the chooser's (redecide_test.go).
func TestSettleForcedIgnoresThisBootsPlan(t *testing.T) {
	h := testhost.New(t).Debian12()
	in := probed(h)
	in.Facts.PreviousPlan = string(backend.IptablesLegacy)
	in.Decision = decide.Decide(in.Facts, in.Config) // the plan is sticky: legacy
	if in.Decision.Backend != backend.IptablesLegacy {
		t.Fatalf("fixture: this boot's plan was not kept (%s)", in.Decision.Backend)
	}
	got, _, err := Settle(h.Root(), in, backend.IptablesLegacy, "")
	if err != nil || got.Decision.Backend != backend.IptablesNFT || len(got.Problems) != 0 || got.Facts.PreviousPlan != "" {
		t.Fatalf("Settle = %s, problems %q, previous plan %q, %v; want the fresh decision, iptables-nft", got.Decision.Backend, got.Problems, got.Facts.PreviousPlan, err)
	}
}
