package switchover

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/k3sgroup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// groupIn is what of k3s's group (kube-proxy, flannel, kube-router) is in
// backend b, by owner: chains, tables and jumps.
func groupIn(t *testing.T, b backend.Backend) map[ownership.Owner]int {
	t.Helper()
	rs, err := cleanup.Read(context.Background(), cleanup.Exec, b)
	if err != nil {
		t.Fatal(err)
	}
	o := ownership.K3s.Find(rs, b == backend.NFTables)
	n := map[ownership.Owner]int{}
	for _, c := range o.Chains {
		n[ownership.Of(c.Table, c.Chain)]++
	}
	for _, j := range o.Jumps {
		n[j.Owner()]++
	}
	return n
}

// On k3s flannel and kube-router write again in the new backend when k3s
// restarts on it, and the switch sweeps their chains from the old one
// with kube-proxy's, so verify passes; a rollback takes them out of the
// abandoned backend and leaves the old one as it was. RKE2's sweep
// (kube-proxy's alone) on the same node leaves flannel's chains behind:
// verify fails, and so does the rollback's, with flannel's chains now in
// both backends (why the switch refused k3s nodes with flannel before).
func TestSwitchK3sGroupInNetns(t *testing.T) {
	const flannel, kubeRouter = ownership.Owner("flannel"), ownership.Owner("kube-router")
	cases := []struct {
		name     string
		from, to backend.Backend
		group    ownership.Group
		broken   []backend.Backend
		wantErr  string // "" success; "rolled back"; "needs a hand"
	}{
		{name: "legacy to nft", from: backend.IptablesLegacy, to: backend.IptablesNFT, group: ownership.K3s},
		{name: "nftables to legacy", from: backend.NFTables, to: backend.IptablesLegacy, group: ownership.K3s},
		{name: "nft never syncs: rollback", from: backend.IptablesLegacy, to: backend.IptablesNFT, group: ownership.K3s, broken: []backend.Backend{backend.IptablesNFT}, wantErr: "rolled back"},
		{name: "RKE2's sweep on k3s: rollback", from: backend.IptablesLegacy, to: backend.IptablesNFT, group: ownership.KubeProxyOnly, wantErr: "needs a hand"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			cfgText := "backend: " + string(c.from) + "\n"
			root := rootWithConfig(t, cfgText, 0o644)
			if err := loadKubeProxy(c.from); err != nil {
				t.Fatal(err)
			}
			if err := k3sCompanions(c.from); err != nil {
				t.Fatal(err)
			}
			companionsFrom := backend.IptablesNFT
			if c.from != backend.NFTables {
				companionsFrom = c.from
			}
			var log bytes.Buffer
			s := &Switch{
				From: c.from, To: c.to,
				Config:    FileConfig{Root: root, File: hostfs.ConfigFile},
				Restarter: &simulatedRKE2{t: t, root: root, broken: set(c.broken), k3s: true},
				Verifier:  LiveVerifier{Root: hostfs.New("/"), Wait: 2 * time.Second, Poll: 100 * time.Millisecond},
				Cleaner:   LiveCleaner{Group: c.group},
				Hints:     LiveHints{},
				Journal:   switchjournal.File{Root: root},
				Log:       &log,
			}
			err := s.Run(context.Background())
			t.Logf("log:\n%s", log.String())
			switch c.wantErr {
			case "":
				if err != nil {
					t.Fatal(err)
				}
				if n := groupIn(t, c.from); len(n) > 0 {
					t.Errorf("k3s's group left in the old backend %s: %v", c.from, n)
				}
				if n := groupIn(t, companionsFrom); n[flannel] > 0 || n[kubeRouter] > 0 {
					t.Errorf("flannel's or kube-router's chains left in %s: %v", companionsFrom, n)
				}
				if n := groupIn(t, c.to); n[ownership.KubeProxy] == 0 || n[flannel] != k3sgroup.Flannel.Objects() || n[kubeRouter] != k3sgroup.KubeRouter.Objects() {
					t.Errorf("the new backend %s holds %v, want kube-proxy's, flannel's %d and kube-router's %d chains and rules in the built-ins", c.to, n, k3sgroup.Flannel.Objects(), k3sgroup.KubeRouter.Objects())
				}
				if want := " kube-proxy, flannel and kube-router object(s) from " + string(c.from); !strings.Contains(log.String(), want) {
					t.Errorf("log lacks %q", want)
				}
			case "rolled back":
				if !errors.Is(err, ErrRolledBack) {
					t.Fatalf("want a rollback, got %v", err)
				}
				if n := groupIn(t, c.to); len(n) > 0 {
					t.Errorf("k3s's group left in the abandoned backend %s: %v", c.to, n)
				}
				if n := groupIn(t, c.from); n[ownership.KubeProxy] == 0 || n[flannel] != k3sgroup.Flannel.Objects() || n[kubeRouter] != k3sgroup.KubeRouter.Objects() {
					t.Errorf("%s after the rollback holds %v, want the group as before", c.from, n)
				}
			default:
				if err == nil || errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "[cni-other-backend] flannel has rules in "+string(c.from)) {
					t.Fatalf("want %q after verify found flannel's chains in %s, got %v", c.wantErr, c.from, err)
				}
			}
		})
	}
}

// On k3s with flannel-backend: none a flannel there is the operator's:
// the switch prepare assembles sweeps kube-proxy's and kube-router's
// chains from the old backend, and from iptables-nft when it leaves
// nftables mode, and leaves the operator's FLANNEL-* chains in both.
func TestSwitchK3sOperatorsFlannelInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	const flannel, kubeRouter = ownership.Owner("flannel"), ownership.Owner("kube-router")
	root := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", "flannel-backend: none\n").Root()
	if _, err := plan.Write(root, plan.Plan{Applied: plan.Wrote(plan.Decision{Backend: backend.IptablesLegacy}, "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"), Decision: plan.Decision{Backend: backend.IptablesLegacy}}); err != nil {
		t.Fatal(err)
	}
	r := Request{Root: root, ConfigFile: hostfs.ConfigFile, Out: io.Discard, Log: io.Discard, distro: distro.Find(root, "")}
	s, _, err := r.prepare(context.Background(), backend.IptablesNFT)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ clean, kubeProxy, companions backend.Backend }{
		{backend.IptablesLegacy, backend.IptablesNFT, backend.IptablesLegacy},
		{backend.NFTables, backend.IptablesLegacy, backend.IptablesNFT},
	} {
		if err := loadKubeProxy(c.clean); err != nil {
			t.Fatal(err)
		}
		if err := k3sCompanions(c.companions); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Cleaner.Clean(context.Background(), c.clean, c.kubeProxy); err != nil {
			t.Fatal(err)
		}
		if n := groupIn(t, c.clean); n[ownership.KubeProxy] > 0 {
			t.Errorf("cleaning %s: kube-proxy's rules left: %v", c.clean, n)
		}
		if n := groupIn(t, c.companions); n[flannel] != k3sgroup.Flannel.Objects() || n[kubeRouter] > 0 {
			t.Errorf("cleaning %s: %s holds %v, want the operator's flannel's %d objects and no kube-router's", c.clean, c.companions, n, k3sgroup.Flannel.Objects())
		}
	}
}
