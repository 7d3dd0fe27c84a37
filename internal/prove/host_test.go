package prove

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func TestScheduleCheck(t *testing.T) {
	ok := Schedule{Poll: time.Second, Quiet: time.Second, Grace: 0, Full: time.Minute}
	if err := ok.Check(); err != nil {
		t.Errorf("%+v: %v; --grace 0 is allowed", ok, err)
	}
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Poll: 0, Quiet: 1, Full: 1}, "--poll 0s: must be positive"},
		{Schedule{Poll: 1, Quiet: -time.Second, Full: 1}, "--quiet -1s: must be positive"},
		{Schedule{Poll: 1, Quiet: 1, Full: 0}, "--full 0s: must be positive"},
		{Schedule{Poll: 1, Quiet: 1, Full: 1, Grace: -5 * time.Second}, "--grace -5s: must not be negative"},
	} {
		if err := c.s.Check(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v; want %q", c.s, err, c.want)
		}
	}
}

// Before watching starts, OnHost looks once: a plan that turned the tool
// off ends it at once, and so does a claim that does not parse.
func TestOnHostEndsAtOnce(t *testing.T) {
	h := testhost.New(t)
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Disabled: true}})
	var j journal
	s := Schedule{Poll: time.Hour, Quiet: time.Hour, Grace: time.Hour, Full: time.Hour}
	if err := (&Command{Host: verify.Host{Root: h.Root()}, Progress: j.log}).Watch(context.Background(), s); !errors.Is(err, verify.ErrOff) {
		t.Errorf("backend: off: %v; want verify.ErrOff", err)
	}
	var bad *verify.FlagError
	c := &Command{Host: verify.Host{Root: h.Root(), Claim: verify.Claim{Backend: "ipchains"}}, Progress: j.log}
	if err := c.Watch(context.Background(), s); !errors.As(err, &bad) {
		t.Errorf("--expect ipchains: %v; want a *verify.FlagError", err)
	}
	if len(j.lines) != 0 {
		t.Errorf("logged %q: nothing was watched", j.lines)
	}
	if _, err := h.Root().Stat(hostfs.StatusFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s written (%v): nothing was verified", hostfs.StatusFile, err)
	}
}

// OnHost on a fixture root (polling: --root sees no netlink events): each
// result goes to status.json with watch's own drift and fleet textfiles beside
// verify's and the NFD labels, the heartbeat beats, the plan is read at every run (turned off
// while watching is "cannot tell", not the end), and the journal lines say
// how it watches and when it stops. In an empty network namespace
// kube-proxy's rules are missing, so verify fails.
func TestOnHostPublishesInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	h := testhost.New(t).Mkdir("/textfile").Mkdir(hostfs.NFDFeaturesDir)
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Source: "cmdline"}})
	var j journal
	c := &Command{Host: verify.Host{Root: h.Root(), ProxyMode: &kubeproxy.Endpoint{}}, TextfileDir: "/textfile", Progress: j.log, NodeFeatures: true}
	stop := onHostInBackground(c, Schedule{Poll: 50 * time.Millisecond, Quiet: 20 * time.Millisecond, Grace: time.Hour, Full: 200 * time.Millisecond})
	defer stop()

	eventually(t, h.Root(), hostfs.StatusFile, `"verdict": "failed"`)
	eventually(t, h.Root(), "/textfile/rke2_proxy_backend.prom", `rke2_proxy_backend_verify_ok 0`)
	eventually(t, h.Root(), path.Join("/textfile", proof.DriftMetricsFile), "rke2_proxy_backend_drift 0\n")
	eventually(t, h.Root(), path.Join("/textfile", proof.FleetMetricsFile), `rke2_proxy_backend_decision_info{backend="iptables-nft",iptables_mode="nft",proxy_mode="iptables",source="cmdline"} 1`)
	eventually(t, h.Root(), hostfs.NFDFeatureFile, "feature.node.kubernetes.io/rke2-proxy-backend.verified=failed\n")
	eventually(t, h.Root(), hostfs.WatchHeartbeat, "")
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Disabled: true}})
	eventually(t, h.Root(), hostfs.StatusFile, "backend: off in the config since watch started")
	if err := stop(); err != nil {
		t.Fatalf("OnHost: %v", err)
	}
	j.waitFor(t, "start line", time.Second, hasLine("started: every backend's stamp every 50ms (--root: no netlink events); verify after 20ms of quiet or every 200ms, drift after 1h0m0s"))
	j.waitFor(t, "first verify line", time.Second, hasLine("first verify: failed in "))
	if last := j.lines[len(j.lines)-1]; last != "stopped" {
		t.Errorf("last line %q, want stopped", last)
	}
}

// On this machine's root OnHost subscribes to nf_tables events: with
// every period an hour, only an event can run verify again. --no-status
// keeps it from writing to the real root.
func TestOnHostWakesOnEventsInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	var j journal
	c := &Command{Host: verify.Host{Root: hostfs.New("/"), Claim: verify.Claim{Backend: "nftables"}, ProxyMode: &kubeproxy.Endpoint{}}, NoStatus: true, Progress: j.log}
	defer onHostInBackground(c, Schedule{Poll: time.Hour, Quiet: 20 * time.Millisecond, Grace: time.Hour, Full: time.Hour})()

	notYet := func(n int) func(lines, _ []string) bool {
		return func(lines, _ []string) bool {
			seen := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "kube-proxy's rules are not complete yet") {
					seen++
				}
			}
			return seen >= n
		}
	}
	j.waitFor(t, "first run", 20*time.Second, notYet(1))
	j.waitFor(t, "start line", time.Second, hasLine("started: nftables and iptables-nft changes by netlink events, legacy stamps every 1h0m0s"))
	if out, err := exec.Command(nstest.Tool(t, "nft"), "add", "table", "ip", "kube-proxy").CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	j.waitFor(t, "a run woken by the nftables change", 20*time.Second, notYet(2))
}
