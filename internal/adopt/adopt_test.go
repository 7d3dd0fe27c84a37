package adopt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// fakeSystemd records what adoption asks of systemd. It has no restart and
// no stop because Systemd has none: the interface itself keeps RKE2 alone.
type fakeSystemd struct {
	active, enabled []string
	calls           []string
}

func (s *fakeSystemd) IsActive(_ context.Context, u string) bool { return slices.Contains(s.active, u) }
func (s *fakeSystemd) IsEnabled(_ context.Context, u string) bool {
	return slices.Contains(s.enabled, u)
}
func (s *fakeSystemd) DaemonReload(context.Context) error {
	s.calls = append(s.calls, "daemon-reload")
	return nil
}
func (s *fakeSystemd) StartNoBlock(_ context.Context, u string) error {
	s.calls = append(s.calls, "start "+u)
	return nil
}

func footprint(t *testing.T, b backend.Backend) *rules.Ruleset {
	t.Helper()
	rs, err := expected.Render(expected.Options{Backend: b, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 34}, Services: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// running is a node where RKE2's server runs and watch is enabled.
func running() *fakeSystemd {
	return &fakeSystemd{active: []string{"rke2-server.service"}, enabled: []string{units.WatchUnit}}
}

func options(t *testing.T, h *testhost.Host, r netfilter.Reader, sd Systemd) Options {
	t.Helper()
	return probedOptions(t, h, facts.Options{}, r, sd)
}

// probedOptions are options on h as the probe with opts reads it.
func probedOptions(t *testing.T, h *testhost.Host, opts facts.Options, r netfilter.Reader, sd Systemd) Options {
	t.Helper()
	f := facts.Probe(h.Root(), opts)
	c, err := config.Load(h.Root(), hostfs.ConfigFile, nil, f.Cmdline)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Root: h.Root(), Facts: f, Config: c, Reader: verifyShaped(r), Systemd: sd,
		Sleep: func(context.Context, time.Duration) error { return nil }}
}

// verifyShaped gives a Fake the shapes production's shallow reader returns.
func verifyShaped(r netfilter.Reader) netfilter.Reader {
	if f, ok := r.(*netfilter.Fake); ok {
		f.ReadOptions = verify.ReadOptions
	}
	return r
}

func adoptOK(t *testing.T, o Options) Result {
	t.Helper()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Adopted {
		t.Fatalf("outcome %s (%s), want adopted", res.Outcome, res.Message)
	}
	return res
}

// The generator, re-run by the daemon-reload, reads the adopted plan from
// the host and keeps its backend: RKE2's next start runs what runs now.
func generatorKeeps(t *testing.T, h *testhost.Host, o Options, want backend.Backend) {
	t.Helper()
	f := facts.Probe(h.Root(), facts.Options{})
	if f.PreviousPlan != string(want) || len(f.Unreadable) > 0 {
		t.Fatalf("the probe reads the adopted plan as %q (unreadable %q), want %s", f.PreviousPlan, f.Unreadable, want)
	}
	if d := decide.Decide(f, o.Config); d.Backend != want {
		t.Errorf("after adoption the generator decides %s (%s), want %s kept", d.Backend, d.Reasons, want)
	}
}

// A Debian node whose iptables alternative is nft but whose kube-proxy
// runs on legacy (the image's detection counted legacy rules): the plan says
// legacy, the generator keeps legacy at RKE2's next start, and the next boot,
// which would follow the alternative, is said.
func TestAdoptRecordsWhatRunsAndTheGeneratorKeepsIt(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134()
	sd := running()
	o := options(t, h, netfilter.NewFake(footprint(t, backend.IptablesLegacy)), sd)
	res := adoptOK(t, o)

	p, err := plan.Read(h.Root())
	if err != nil {
		t.Fatal(err)
	}
	if p.Schema != plan.Schema || p.Decision.Backend != backend.IptablesLegacy || p.Decision.Source != Source || p.Kubernetes != "v1.34.10" ||
		p.Applied != (plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", By: plan.ByAdopt}) {
		t.Errorf("plan = %+v", p)
	}
	if !strings.Contains(strings.Join(p.Decision.Reasons, " "), "live in iptables-legacy and in no other backend") {
		t.Errorf("reasons %q do not say where the rules are", p.Decision.Reasons)
	}
	want := []string{"daemon-reload", "start " + units.VerifyUnit, "start " + units.WatchUnit}
	if !slices.Equal(sd.calls, want) {
		t.Errorf("systemd calls %q, want %q", sd.calls, want)
	}
	if res.NextStart.Backend != backend.IptablesLegacy {
		t.Errorf("next start %+v, want iptables-legacy kept", res.NextStart)
	}
	if res.NextBoot.Backend != backend.IptablesNFT || len(res.Differences) != 1 || !strings.Contains(res.Differences[0], "At the next boot") ||
		!strings.Contains(res.Differences[0], "set backend: iptables-legacy") {
		t.Errorf("next boot %+v, differences %q", res.NextBoot, res.Differences)
	}
	if !slices.Equal(p.Warnings, res.Differences) {
		t.Errorf("plan warnings %q, want the differences %q", p.Warnings, res.Differences)
	}
	generatorKeeps(t, h, o, backend.IptablesLegacy)

	// Running adopt again finds the plan and changes nothing.
	sd.calls = nil
	again, err := Run(context.Background(), o)
	if err != nil || again.Outcome != Planned || len(sd.calls) != 0 {
		t.Errorf("second run: %s %q, %v, calls %q", again.Outcome, again.Message, err, sd.calls)
	}
}

// backend: iptables-legacy in the operator's config while kube-proxy runs
// on iptables-nft: adoption records iptables-nft and says the next start
// would switch and strand, with the two ways out; nothing is switched.
func TestAdoptSaysTheNextStartWouldSwitch(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134().File(hostfs.ConfigFile, "backend: iptables-legacy\n")
	o := options(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), running())
	res := adoptOK(t, o)
	if res.Plan.Decision.Backend != backend.IptablesNFT || res.NextStart.Backend != backend.IptablesLegacy {
		t.Fatalf("plan %s, next start %+v", res.Plan.Decision.Backend, res.NextStart)
	}
	d := strings.Join(res.Differences, "\n")
	check.Says(t, "differences", d,
		"At RKE2's next start the generator would switch kube-proxy from iptables-nft to iptables-legacy (source config",
		"iptables-nft's rules would be left stranded",
		"set backend: iptables-nft (or auto) in /etc/rke2-proxy-backend/config.yaml",
		"rke2-proxy-backend switch --to iptables-legacy",
	)
}

// A legacy trigger matches this host, kube-proxy runs on iptables-nft: the
// adopted plan keeps nft at RKE2's next start (this boot's plan comes before
// the triggers), the next boot goes to legacy, and adoption says so.
func TestAdoptWithALegacyTriggerSaysTheNextBoot(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134().File(hostfs.ConfigFile, "legacy_triggers:\n  dmi: [\"QEMU\"]\n")
	o := options(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), running())
	res := adoptOK(t, o)
	if res.NextStart.Backend != backend.IptablesNFT || res.NextBoot.Backend != backend.IptablesLegacy {
		t.Fatalf("next start %+v, next boot %+v", res.NextStart, res.NextBoot)
	}
	if len(res.Differences) != 1 || !strings.Contains(res.Differences[0], "the generator would choose iptables-legacy instead of iptables-nft (source auto") ||
		!strings.Contains(res.Differences[0], "legacy trigger") {
		t.Errorf("differences %q", res.Differences)
	}
	generatorKeeps(t, h, o, backend.IptablesNFT)
}

func TestAdoptRecordsNothingWhenItCannotTell(t *testing.T) {
	for _, c := range []struct {
		name   string
		live   []*rules.Ruleset
		want   Outcome
		saying []string
	}{
		{"no rules yet", nil, CannotTell, []string{"no kube-proxy rules in any backend", "adopt --wait 5m"}},
		{"two backends", []*rules.Ruleset{footprint(t, backend.IptablesLegacy), footprint(t, backend.NFTables)}, CannotTell,
			[]string{"kube-proxy rules are in iptables-legacy and nftables", "cannot be told", "verify --expect iptables-legacy --wait 0s", "cleanup --backend B"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2v134()
			sd := running()
			res, err := Run(context.Background(), options(t, h, netfilter.NewFake(c.live...), sd))
			if err != nil || res.Outcome != c.want {
				t.Fatalf("Run = %s (%s), %v; want %s", res.Outcome, res.Message, err, c.want)
			}
			for _, s := range c.saying {
				if !strings.Contains(res.Message, s) {
					t.Errorf("message %q does not say %q", res.Message, s)
				}
			}
			if _, err := plan.Read(h.Root()); !errors.Is(err, fs.ErrNotExist) || len(sd.calls) != 0 {
				t.Errorf("a plan was written (%v) or systemd asked (%q)", err, sd.calls)
			}
		})
	}
}

// RKE2 active but kube-proxy not synced yet: --wait reads again until its
// rules appear, then adopts.
func TestAdoptWaitsForKubeProxysFirstSync(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134()
	fake := netfilter.NewFake()
	o := options(t, h, fake, running())
	o.Wait = time.Minute
	clock := time.Unix(1000, 0)
	o.Now = func() time.Time { return clock }
	sleeps := 0
	o.Sleep = func(context.Context, time.Duration) error {
		sleeps++
		clock = clock.Add(o.Poll)
		if sleeps == 3 {
			fake.Set(footprint(t, backend.IptablesNFT))
		}
		return nil
	}
	res := adoptOK(t, o)
	if sleeps != 3 || res.Plan.Decision.Backend != backend.IptablesNFT {
		t.Errorf("slept %d times, plan %s", sleeps, res.Plan.Decision.Backend)
	}
	// Without rules the wait ends at its bound.
	h2 := testhost.New(t).Debian12().RKE2v134()
	o2 := options(t, h2, netfilter.NewFake(), running())
	o2.Wait, o2.Poll, o2.Now = 10*time.Second, 2*time.Second, func() time.Time { return clock }
	n := 0
	o2.Sleep = func(context.Context, time.Duration) error { n++; clock = clock.Add(2 * time.Second); return nil }
	if res, _ := Run(context.Background(), o2); res.Outcome != CannotTell || n != 5 {
		t.Errorf("outcome %s after %d sleeps, want cannot-tell after 5 (reads at 0, 2, ... 10s)", res.Outcome, n)
	}
}

func TestAdoptHasNothingToDo(t *testing.T) {
	t.Run("RKE2 not running", func(t *testing.T) {
		h := testhost.New(t).Debian12().RKE2v134()
		sd := &fakeSystemd{}
		res, err := Run(context.Background(), options(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), sd))
		if err != nil || res.Outcome != NotRunning || len(sd.calls) != 0 || !strings.Contains(res.Message, "neither rke2-server nor rke2-agent is active") {
			t.Errorf("Run = %+v, %v, calls %q", res, err, sd.calls)
		}
	})
	t.Run("disable-kube-proxy", func(t *testing.T) {
		h := testhost.New(t).Debian12().RKE2v134().RKE2Config("config.yaml", "disable-kube-proxy: true\n")
		res, err := Run(context.Background(), options(t, h, netfilter.NewFake(), running()))
		if err != nil || res.Outcome != Disabled || !strings.Contains(res.Message, "disable-kube-proxy") {
			t.Errorf("Run = %+v, %v", res, err)
		}
	})
	t.Run("agent, watch disabled by the operator", func(t *testing.T) {
		h := testhost.New(t).Debian12().RKE2Unit("tarball", "agent").RKE2Version("v1.34.10+rke2r1")
		sd := &fakeSystemd{active: []string{"rke2-agent.service"}}
		res := adoptOK(t, options(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), sd))
		if res.Unit != "rke2-agent.service" || !slices.Equal(sd.calls, []string{"daemon-reload", "start " + units.VerifyUnit}) {
			t.Errorf("unit %s, calls %q (watch must stay off)", res.Unit, sd.calls)
		}
	})
}

func TestAdoptDryRunWritesAndStartsNothing(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134()
	sd := running()
	o := options(t, h, netfilter.NewFake(footprint(t, backend.NFTables)), sd)
	o.DryRun = true
	res := adoptOK(t, o)
	if res.Plan.Decision.Backend != backend.NFTables || res.Plan.Decision.ProxyMode != "nftables" {
		t.Errorf("plan %+v", res.Plan.Decision)
	}
	if _, err := plan.Read(h.Root()); !errors.Is(err, fs.ErrNotExist) || len(sd.calls) != 0 {
		t.Errorf("dry run wrote a plan (%v) or asked systemd (%q)", err, sd.calls)
	}
}

// kube-proxy's own answer must agree with the rules: /proxyMode served by
// a real HTTP server on loopback.
func TestAdoptChecksProxyMode(t *testing.T) {
	for _, c := range []struct {
		answer string
		rules  backend.Backend
		want   Outcome
		saying string
	}{
		{"iptables", backend.IptablesNFT, Adopted, "kube-proxy's /proxyMode says iptables."},
		{"nftables", backend.IptablesNFT, Refused, "but its /proxyMode says nftables"},
		{"ipvs", backend.IptablesLegacy, Refused, "ipvs mode"},
		{"<html>", backend.IptablesNFT, Refused, "not a kube-proxy mode"},
	} {
		t.Run(c.answer, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/proxyMode" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprint(w, c.answer)
			}))
			defer srv.Close()
			h := testhost.New(t).Debian12().RKE2v134()
			o := options(t, h, netfilter.NewFake(footprint(t, c.rules)), running())
			o.ProxyModeURL = srv.URL + "/proxyMode"
			res, err := Run(context.Background(), o)
			if err != nil || res.Outcome != c.want {
				t.Fatalf("Run = %s (%s), %v; want %s", res.Outcome, res.Message, err, c.want)
			}
			text := res.Message
			if res.Plan != nil {
				text = strings.Join(res.Plan.Decision.Reasons, " ")
			}
			if !strings.Contains(text, c.saying) {
				t.Errorf("%q does not say %q", text, c.saying)
			}
		})
	}
}

// RKE2's effective config pins a backend kube-proxy does not run: it
// was set after RKE2 started. Adoption records what runs and warns.
func TestAdoptWarnsWhenRKE2sConfigDisagrees(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134().RKE2Config("config.yaml", "kube-proxy-extra-env:\n  - IPTABLES_MODE=legacy\n")
	res := adoptOK(t, options(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), running()))
	w := strings.Join(res.Plan.Warnings, "\n")
	if res.Plan.Decision.Backend != backend.IptablesNFT || !strings.Contains(w, "RKE2's config says IPTABLES_MODE=legacy (in /etc/rancher/rke2/config.yaml) but kube-proxy's rules are in iptables-nft") {
		t.Errorf("plan %s, warnings:\n%s", res.Plan.Decision.Backend, w)
	}
	// RKE2 reads that pin at its next start: the switch is said.
	if res.NextStart.Backend != backend.IptablesLegacy || !strings.Contains(w, "from iptables-nft to iptables-legacy (source rke2-config") {
		t.Errorf("next start %+v, warnings:\n%s", res.NextStart, w)
	}
}

func TestAdoptReadErrorsRecordNothing(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2v134()
	fake := netfilter.NewFake(footprint(t, backend.IptablesNFT))
	fake.SetError(backend.IptablesLegacy, errors.New("boom"))
	sd := running()
	_, err := Run(context.Background(), options(t, h, fake, sd))
	if err == nil || !strings.Contains(err.Error(), "reading iptables-legacy's live rules: boom") || len(sd.calls) != 0 {
		t.Errorf("Run = %v, calls %q", err, sd.calls)
	}
	// An unreadable plan is not overwritten.
	h.File(hostfs.PlanFile, `{"schema":9}`)
	if _, err := Run(context.Background(), options(t, h, netfilter.NewFake(), sd)); err == nil || !strings.Contains(err.Error(), "schema 9") {
		t.Errorf("Run over a schema-9 plan = %v", err)
	}
}
