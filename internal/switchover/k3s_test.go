package switchover

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On k3s the unit switch restarts is k3s's: the active one, else the one
// install.sh installed (INSTALL_K3S_NAME included).
func TestFindUnitK3s(t *testing.T) {
	inactive := func(context.Context, string) bool { return false }
	h := testhost.New(t).Debian12().K3sUnit("k3s-edge", "agent")
	if got, err := FindUnit(context.Background(), distro.Find(h.Root(), ""), inactive); err != nil || got != "k3s-edge.service" {
		t.Errorf("installed: got %q, %v", got, err)
	}
	h.K3sUnit("k3s", "server")
	active := func(_ context.Context, u string) bool { return u == "k3s.service" }
	if got, err := FindUnit(context.Background(), distro.Find(h.Root(), ""), active); err != nil || got != "k3s.service" {
		t.Errorf("active: got %q, %v", got, err)
	}
	if _, err := FindUnit(context.Background(), distro.Find(h.Root(), ""), inactive); err == nil || !strings.Contains(err.Error(), "k3s-edge.service and k3s.service") {
		t.Errorf("two installed, none active: %v", err)
	}
}

// A switch on a k3s node with k3s's flannel goes ahead (it used to be
// refused: its sweep left flannel's chains in the old backend and verify
// rolled it back) and sweeps k3s's group from the old backend; on RKE2 it
// sweeps kube-proxy's alone.
func TestK3sSwitchSweepsTheGroup(t *testing.T) {
	for _, c := range []struct {
		name string
		h    *testhost.Host
		want ownership.Group
	}{
		{"k3s with flannel", testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", "write-kubeconfig-mode: \"0644\"\n"), ownership.K3s},
		{"RKE2", testhost.New(t).Debian12().RKE2Unit("tarball", "server"), ownership.KubeProxyOnly},
		// flannel-backend: none: a flannel there is the operator's, and
		// the switch never sweeps it (verify does not judge it k3s's).
		{"k3s without its flannel", testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", "flannel-backend: none\n"), ownership.Group{ownership.KubeProxy, ownership.Owner(cni.OwnerKubeRouter)}},
	} {
		root := c.h.Root()
		if _, err := plan.Write(root, plan.Plan{Applied: plan.Wrote(plan.Decision{Backend: backend.IptablesLegacy}, "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"), Decision: plan.Decision{Backend: backend.IptablesLegacy}}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		s, done, err := Request{Root: root, ConfigFile: hostfs.ConfigFile, Out: &out, Log: &out, distro: distro.Find(root, "")}.prepare(context.Background(), backend.IptablesNFT)
		if err != nil || done {
			t.Fatalf("%s: prepare = %v, done %v\n%s", c.name, err, done, out.String())
		}
		if got := s.Cleaner.(LiveCleaner).Group; !slices.Equal(got, c.want) {
			t.Errorf("%s: the switch sweeps %v, want %v", c.name, got, c.want)
		}
	}
}

// The steps say whose rules each sweep takes: kube-proxy's on RKE2, in the
// words they always had; on k3s flannel's and kube-router's too, except in
// iptables-nft beside nftables mode, where those two live.
func TestSweepStepsNameTheGroup(t *testing.T) {
	for _, c := range []struct {
		group    ownership.Group
		from, to backend.Backend
		want     [3]string // before the restart, after it, in the rollback
	}{
		{nil, backend.IptablesLegacy, backend.IptablesNFT, [3]string{
			"remove stale kube-proxy rules from iptables-nft (kube-proxy uses iptables-legacy until the restart)",
			"remove kube-proxy's rules from iptables-legacy", "remove kube-proxy's rules from iptables-nft"}},
		{ownership.K3s, backend.IptablesLegacy, backend.IptablesNFT, [3]string{
			"remove the stale rules of kube-proxy, flannel and kube-router from iptables-nft (kube-proxy uses iptables-legacy until the restart)",
			"remove the rules of kube-proxy, flannel and kube-router from iptables-legacy", "remove the rules of kube-proxy, flannel and kube-router from iptables-nft"}},
		{ownership.K3s, backend.NFTables, backend.IptablesLegacy, [3]string{
			"remove the stale rules of kube-proxy, flannel and kube-router from iptables-legacy (kube-proxy uses nftables until the restart)",
			"remove kube-proxy's rules from nftables, and those of flannel and kube-router from iptables-nft", "remove the rules of kube-proxy, flannel and kube-router from iptables-legacy"}},
		{ownership.K3s, backend.IptablesNFT, backend.NFTables, [3]string{
			"remove stale kube-proxy rules from nftables (kube-proxy uses iptables-nft until the restart)",
			"remove kube-proxy's rules from iptables-nft", "remove kube-proxy's rules from nftables"}},
	} {
		root := hostfs.New(t.TempDir())
		s := &Switch{From: c.from, To: c.to, Cleaner: LiveCleaner{Group: c.group}, Config: FileConfig{Root: root, File: hostfs.ConfigFile},
			Restarter: UnitRestarter{Unit: "k3s.service"}, Journal: switchjournal.File{Root: root}}
		plan, rollback := s.Plan(), s.RollbackPlan()
		if got := [3]string{plan[0], plan[4], rollback[3]}; got != c.want {
			t.Errorf("%v from %s to %s: steps\n%q\nwant\n%q", c.group, c.from, c.to, got, c.want)
		}
	}
}

// An RKE2 node with a stray k3s unit is RKE2's (distro.Find): the switch
// restarts rke2-server, inactive or not, where it used to list the k3s
// unit beside it and give up ("are installed and none is active").
// --distribution k3s makes it k3s's, and the switch restarts k3s.
func TestSwitchUnitFollowsTheDistribution(t *testing.T) {
	for _, c := range []struct {
		flag distro.Kind
		want string
	}{
		{"", "restart rke2-server.service"},
		{distro.RKE2, "restart rke2-server.service"},
		{distro.Kind("k3s"), "restart k3s.service"},
	} {
		root := testhost.New(t).Debian12().RKE2Unit("tarball", "server").K3sUnit("k3s", "server").Root()
		if _, err := plan.Write(root, plan.Plan{Applied: plan.Wrote(plan.Decision{Backend: backend.IptablesLegacy}, "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"), Decision: plan.Decision{Backend: backend.IptablesLegacy}}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		r := Request{Root: root, ConfigFile: hostfs.ConfigFile, To: string(backend.IptablesNFT), DryRun: true, Timeout: time.Minute, Out: &out, Log: &out, Distribution: c.flag}
		if err := Do(context.Background(), r); err != nil || !strings.Contains(out.String(), c.want) {
			t.Errorf("--distribution %q: %v, want %q in\n%s", c.flag, err, c.want, out.String())
		}
	}
}
