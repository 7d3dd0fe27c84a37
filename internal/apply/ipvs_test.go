package apply

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// decided is apply's input for h as the command builds it: probe, the
// operator config, decide.
func decided(t *testing.T, h *testhost.Host) Input {
	t.Helper()
	f := facts.Probe(h.Root(), facts.Options{})
	c, err := config.Load(h.Root(), hostfs.ConfigFile, nil, f.Cmdline)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Facts: f, Config: c, Decision: decide.Decide(f, c)}
}

// On an ipvs node apply loads ipvs's modules (the configured scheduler's
// included) after the backend's, writes IPTABLES_MODE and no proxy-mode,
// and plan.json records the mode and the scheduler.
func TestApplyIPVSNode(t *testing.T) {
	h := testhost.New(t).IPVSNodeOn("v1.38.0+rke2r1")
	kmodtest.Install(t, h.Dir(), h.Release())
	res, _, log := run(t, h, decided(t, h), false)
	if len(res.Problems) != 0 {
		t.Fatalf("problems %q\n%s", res.Problems, log)
	}
	calls := kmodtest.Calls(t, h.Dir())
	for _, m := range []string{"ip_vs", "ip_vs_sh", "ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip", "ip_set_hash_ipportnet", "ip_set_bitmap_port", "xt_set", "xt_ipvs", "dummy", "nft_chain_nat"} {
		if !slices.Contains(calls, m) {
			t.Errorf("modprobe calls %v lack %s", calls, m)
		}
	}
	if slices.Contains(calls, "ip_vs_rr") || strings.Contains(strings.Join(calls, " "), "iptable_") {
		t.Errorf("modprobe calls %v: another scheduler's or the other backend's modules", calls)
	}
	if i, j := slices.Index(calls, "ip_vs"), slices.Index(calls, "ip_vs_sh"); i > j {
		t.Errorf("ip_vs_sh loaded before ip_vs: %v", calls)
	}
	data, err := os.ReadFile(h.Root().Path(dropInPath))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "proxy-mode") || !strings.Contains(string(data), `"IPTABLES_MODE=nft"`) {
		t.Errorf("drop-in:\n%s", data)
	}
	p, err := plan.Read(h.Root())
	if err != nil || p.Decision.ProxyMode != "ipvs" || p.Decision.IPVSScheduler != "sh" || p.Decision.Backend != "iptables-nft" || !slices.Contains(p.ModulesLoaded, "ip_vs_sh") {
		t.Errorf("plan %+v, %v", p, err)
	}
}

// A module the kernel's tree lacks is handled as today: said, recorded as
// missing, and not a reason to refuse (the feature check decides).
func TestApplyIPVSMissingScheduler(t *testing.T) {
	h := testhost.New(t).Debian12().IPVSModuleTree("ip_vs_sh").RKE2Unit("tarball", "server").RKE2Version("v1.36.3+rke2r1").IPVSNode("sh")
	kmodtest.Install(t, h.Dir(), h.Release())
	res, _, log := run(t, h, decided(t, h), false)
	if len(res.Problems) != 0 || !slices.Contains(res.Plan.ModulesMissing, "ip_vs_sh") {
		t.Errorf("problems %q, missing %q\n%s", res.Problems, res.Plan.ModulesMissing, log)
	}
	if !strings.Contains(log, "not in this kernel's module tree") || !strings.Contains(log, "ip_vs_sh") {
		t.Errorf("log does not name ip_vs_sh:\n%s", log)
	}
}
