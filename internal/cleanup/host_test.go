package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// rootWithPlan is a fixture root whose plan.json holds planJSON ("": no plan).
func rootWithPlan(t *testing.T, planJSON string) hostfs.Root {
	t.Helper()
	h := testhost.New(t)
	if planJSON != "" {
		h.File(hostfs.PlanFile, planJSON)
	}
	return h.Root()
}

const (
	nftPlan = `{"schema": 1, "drop_in": "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", "decision": {"backend": "iptables-nft", "proxy_mode": "iptables", "iptables_mode": "nft", "source": "auto", "reasons": []}, "modules_loaded": []}`
	offPlan = `{"schema": 1, "decision": {"disabled": true, "backend": "", "source": "config", "reasons": []}, "modules_loaded": []}`
	// nothingPlan: apply gave the distribution no backend of ours.
	nothingPlan = `{"schema": 1, "decision": {"backend": "iptables-nft", "proxy_mode": "iptables", "iptables_mode": "nft", "source": "auto", "reasons": []}, "applied": {"nothing": "no iptables-nft"}, "modules_loaded": []}`
)

func TestPlannedBackend(t *testing.T) {
	k3s := distro.Kind("k3s")
	for _, tc := range []struct {
		name, plan string
		kind       distro.Kind
		want       backend.Backend
		wantErr    string
	}{
		{"planned", nftPlan, distro.RKE2, backend.IptablesNFT, ""},
		{"no plan", "", distro.RKE2, "", "no plan at " + hostfs.PlanFile + ": nothing says which backend kube-proxy uses, so nothing says where kubelet's hints belong (let RKE2 start once"},
		{"no plan on k3s", "", k3s, "", "(let k3s start once, or run rke2-proxy-backend apply)"},
		{"nothing applied on k3s", nothingPlan, k3s, "", "says apply gave k3s no backend this boot"},
		{"turned off", offPlan, distro.RKE2, "", "rke2-proxy-backend is turned off (backend: off)"},
		{"corrupt", "not json", distro.RKE2, "", hostfs.PlanFile},
	} {
		got, err := PlannedBackend(rootWithPlan(t, tc.plan), tc.kind)
		if got != tc.want || (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: %q, %v; want %q and an error containing %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// Stranded refuses before it reads anything: the planned backend's rules
// are live, and a plan it cannot read says nothing about which are.
func TestStrandedRefusesBeforeReading(t *testing.T) {
	ctx := context.Background()
	_, err := Stranded(ctx, rootWithPlan(t, nftPlan), backend.IptablesNFT, Options{DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "kube-proxy uses iptables-nft according to "+hostfs.PlanFile+"; refusing to remove its live rules (use --force") {
		t.Errorf("planned backend: %v; want the refusal", err)
	}
	if _, err := Stranded(ctx, rootWithPlan(t, "not json"), backend.IptablesLegacy, Options{DryRun: true}); err == nil || !strings.Contains(err.Error(), hostfs.PlanFile) {
		t.Errorf("corrupt plan: %v; want its error", err)
	}
}

// In a fresh namespace: a dry run removes nothing and says what would go,
// the real run removes it, and with Force the planned backend is cleaned
// too; a plan that is off objects to nothing.
func TestStrandedInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, hostfs.IptablesLegacyRestore)
	ctx := context.Background()
	expectedtest.Load(t, expected.Options{Backend: backend.IptablesLegacy, Services: 1})
	dry, err := Stranded(ctx, rootWithPlan(t, offPlan), backend.IptablesLegacy, Options{DryRun: true})
	if err != nil || dry.Empty() {
		t.Fatalf("dry run: %v, %v; want kube-proxy's objects", dry, err)
	}
	if again, err := Stranded(ctx, rootWithPlan(t, ""), backend.IptablesLegacy, Options{DryRun: true}); err != nil || len(again.Removals) != len(dry.Removals) {
		t.Fatalf("the dry run changed the rules: %v, %v", again, err)
	}
	if _, err := Stranded(ctx, rootWithPlan(t, nftPlan), backend.IptablesNFT, Options{Force: true}); err != nil {
		t.Fatalf("forced clean of the planned backend: %v", err)
	}
	done, err := Stranded(ctx, rootWithPlan(t, nftPlan), backend.IptablesLegacy, Options{})
	if err != nil || len(done.Removals) != len(dry.Removals) {
		t.Fatalf("real run: %v, %v; want the dry run's %d removals", done, err, len(dry.Removals))
	}
	if left, err := Stranded(ctx, rootWithPlan(t, ""), backend.IptablesLegacy, Options{DryRun: true}); err != nil || !left.Empty() {
		t.Errorf("after the real run: %v, %v; want nothing left", left, err)
	}
}

func TestToolsDryRunLoadsNothing(t *testing.T) {
	ctx := context.Background()
	// A restore that does not exist: the dry runner must not even look.
	if out, err := Tools(true)(ctx, "*filter\nCOMMIT\n", "/nonexistent/iptables-legacy-restore", "--noflush"); out != "" || err != nil {
		t.Errorf("dry run of a restore: %q, %v; want it pretended", out, err)
	}
	if _, err := Tools(false)(ctx, "", "/nonexistent/iptables-legacy-restore"); err == nil {
		t.Error("real run of a missing restore: no error")
	}
	// Reads run for real.
	if out, err := Tools(true)(ctx, "", "echo", "read"); out != "read\n" || err != nil {
		t.Errorf("dry run of a read: %q, %v; want it run", out, err)
	}
}

func TestResultText(t *testing.T) {
	p := &Plan{Backend: backend.IptablesLegacy, Removals: []string{"ipv4 nat chain KUBE-SERVICES", "ipv6 nat chain KUBE-SERVICES"}}
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Plan: p, DryRun: true}, "cleanup: would remove 2 kube-proxy object(s) from iptables-legacy:\n  ipv4 nat chain KUBE-SERVICES\n  ipv6 nat chain KUBE-SERVICES\n"},
		{Result{Plan: p}, "cleanup: removed 2 kube-proxy object(s) from iptables-legacy:\n  ipv4 nat chain KUBE-SERVICES\n  ipv6 nat chain KUBE-SERVICES\n"},
		{Result{Plan: &Plan{Backend: backend.NFTables}, DryRun: true}, "cleanup: no kube-proxy rules in nftables; nothing to remove\n"},
	} {
		if got := tc.r.Text(); got != tc.want {
			t.Errorf("Text() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// A k3s config cleanup cannot read says nothing about whether a flannel
// there is k3s's: cleanup refuses, naming the file, before it reads or
// removes a rule, rather than take k3s's defaults and remove an
// operator's chains.
func TestStrandedUnreadableK3sConfig(t *testing.T) {
	root := testhost.New(t).K3sUnit("k3s", "server").K3sConfig("config.yaml", "flannel-backend: [none\n").Root()
	_, err := Stranded(context.Background(), root, backend.IptablesLegacy, Options{Distribution: distro.Kind("k3s")})
	if err == nil || !strings.Contains(err.Error(), "/etc/rancher/k3s/config.yaml") || !strings.Contains(err.Error(), "cannot tell whether k3s runs its flannel and kube-router") {
		t.Fatalf("got %v, want a refusal naming k3s's config", err)
	}
}
