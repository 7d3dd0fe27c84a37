package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/k3sgroup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// felix is someone else's chain and jump (Calico's), which no cleanup takes.
const felix = "*filter\n:cali-FORWARD - [0:0]\n-A FORWARD -m comment --comment \"cali:wUHhoiAYhphO9Mso\" -j cali-FORWARD\nCOMMIT\n"

// On k3s `cleanup --backend B` takes kube-proxy's, flannel's and
// kube-router's chains and the jumps into them from B, and says whose
// each was; kubelet's chains and Felix's stay, and so does the live
// backend, byte for byte. RKE2's cleanup of the same rules takes
// kube-proxy's alone. With kube-proxy in nftables mode flannel and
// kube-router live in iptables-nft, so there only kube-proxy's go.
func TestCleanupK3sGroupInNetns(t *testing.T) {
	cases := []struct {
		stranded, chosen backend.Backend
		companionsLive   bool // flannel's and kube-router's in stranded are live
	}{
		{stranded: backend.IptablesLegacy, chosen: backend.IptablesNFT},
		{stranded: backend.IptablesNFT, chosen: backend.IptablesLegacy},
		{stranded: backend.IptablesNFT, chosen: backend.NFTables, companionsLive: true},
	}
	for _, c := range cases {
		t.Run(string(c.stranded)+" next to "+string(c.chosen), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			flavour := c.stranded.IptablesMode()
			expectedtest.Load(t, expected.Options{Backend: c.stranded, Services: 3})
			nstest.Feed(t, k3sgroup.Restore(k3sgroup.Flannel, k3sgroup.KubeRouter)+felix, "iptables-"+flavour+"-restore", "-w", "5", "--noflush")
			expectedtest.Load(t, expected.Options{Backend: c.chosen, Services: 5})
			before := snapshot(t, c.chosen)
			root := hostfs.New(t.TempDir())
			if _, err := plan.Write(root, plan.Plan{Applied: plan.Wrote(plan.Decision{Backend: c.chosen}, "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"), Decision: plan.Decision{Backend: c.chosen}}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()

			rke2, err := Stranded(ctx, root, c.stranded, Options{DryRun: true, Distribution: distro.RKE2})
			if err != nil {
				t.Fatal(err)
			}
			rke2Text := Result{Plan: rke2, DryRun: true}.Text()
			check.Says(t, "RKE2's dry run", rke2Text, "cleanup: would remove ", " kube-proxy object(s) from "+string(c.stranded)+":\n", "chain KUBE-SERVICES\n")
			for _, never := range []string{"FLANNEL-", "KUBE-ROUTER-", "KUBE-NWPLCY-", "cali-", "KUBE-IPTABLES-HINT", "(kube-proxy)"} {
				if strings.Contains(rke2Text, never) {
					t.Errorf("RKE2's cleanup would take %q:\n%s", never, rke2Text)
				}
			}

			p, err := Stranded(ctx, root, c.stranded, Options{Distribution: distro.Kind("k3s")})
			if err != nil {
				t.Fatal(err)
			}
			text := Result{Plan: p}.Text()
			left := snapshot(t, c.stranded)
			check.Says(t, "what cleanup left (kubelet's, Felix's)", left, ":KUBE-IPTABLES-HINT", ":KUBE-KUBELET-CANARY", ":KUBE-FIREWALL", ":cali-FORWARD", "-j cali-FORWARD")
			companions := []string{":FLANNEL-POSTRTG", ":FLANNEL-FWD", ":KUBE-ROUTER-INPUT", ":KUBE-ROUTER-FORWARD", ":KUBE-ROUTER-OUTPUT", ":KUBE-NWPLCY-DEFAULT",
				`-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG`, `-A INPUT -m comment --comment "kube-router netpol - 4IA2OSFRMVNDXBVV" -j KUBE-ROUTER-INPUT`}
			if c.companionsLive {
				check.Says(t, "what cleanup left in "+string(c.stranded)+" beside kube-proxy's native tables (flannel's and kube-router's, live)", left, companions...)
				check.Says(t, "report", text, " kube-proxy object(s) from "+string(c.stranded)+":\n")
			} else {
				for _, gone := range companions {
					if strings.Contains(left, gone) {
						t.Errorf("k3s's cleanup left %q in %s:\n%s", gone, c.stranded, left)
					}
				}
				check.Says(t, "report", text, " object(s) of kube-proxy, flannel and kube-router from "+string(c.stranded)+":\n",
					"  ipv4 nat chain FLANNEL-POSTRTG (flannel)\n", "  ipv4 filter chain KUBE-NWPLCY-DEFAULT (kube-router)\n",
					`  ipv4 filter rule: -A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD (flannel)`+"\n", "  ipv4 nat chain KUBE-SERVICES\n")
			}
			if strings.Contains(left, ":KUBE-SERVICES") || strings.Contains(left, ":KUBE-SVC-") {
				t.Errorf("kube-proxy's chains left in %s:\n%s", c.stranded, left)
			}
			after, err := Read(ctx, Exec, c.stranded)
			if err != nil {
				t.Fatal(err)
			}
			if again := ComputeGroup(after, ownership.K3s.StraysIn(c.stranded, c.chosen)); !again.Empty() {
				t.Errorf("a second cleanup would remove %q", again.Removals)
			}
			if got := snapshot(t, c.chosen); got != before {
				t.Errorf("the chosen backend %s changed:\n--- before\n%s\n--- after\n%s", c.chosen, before, got)
			}
		})
	}
}

// A flannel or kube-router that k3s does not run (flannel-backend: none,
// disable-network-policy: true) is the operator's, with its own iptables
// choice: k3s's cleanup takes kube-proxy's chains and the writers k3s
// does run, and leaves the operator's FLANNEL-* or KUBE-ROUTER-* chains
// where they are, as verify judges them not k3s's.
func TestCleanupK3sOperatorsWriterInNetns(t *testing.T) {
	flannel := []string{":FLANNEL-POSTRTG", ":FLANNEL-FWD", `-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG`}
	kubeRouter := []string{":KUBE-ROUTER-INPUT", ":KUBE-NWPLCY-DEFAULT", `-A INPUT -m comment --comment "kube-router netpol - 4IA2OSFRMVNDXBVV" -j KUBE-ROUTER-INPUT`}
	for _, c := range []struct {
		config       string
		kept, gone   []string
		owners, none string
	}{
		{"flannel-backend: none\n", flannel, kubeRouter, " object(s) of kube-proxy and kube-router from iptables-legacy:\n", "(flannel)"},
		{"disable-network-policy: true\n", kubeRouter, flannel, " object(s) of kube-proxy and flannel from iptables-legacy:\n", "(kube-router)"},
	} {
		t.Run(strings.TrimSpace(c.config), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			expectedtest.Load(t, expected.Options{Backend: backend.IptablesLegacy, Services: 3})
			nstest.Feed(t, k3sgroup.Restore(k3sgroup.Flannel, k3sgroup.KubeRouter), "iptables-legacy-restore", "-w", "5", "--noflush")
			root := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", c.config).Root()
			if _, err := plan.Write(root, plan.Plan{Applied: plan.Wrote(plan.Decision{Backend: backend.IptablesNFT}, "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"), Decision: plan.Decision{Backend: backend.IptablesNFT}}); err != nil {
				t.Fatal(err)
			}
			p, err := Stranded(context.Background(), root, backend.IptablesLegacy, Options{Distribution: distro.Kind("k3s")})
			if err != nil {
				t.Fatal(err)
			}
			text := Result{Plan: p}.Text()
			check.Says(t, "report", text, c.owners, "  ipv4 nat chain KUBE-SERVICES\n")
			if strings.Contains(text, c.none) {
				t.Errorf("the report takes the operator's %s chains:\n%s", c.none, text)
			}
			left := snapshot(t, backend.IptablesLegacy)
			check.Says(t, "what cleanup left (the operator's writer's)", left, c.kept...)
			for _, g := range append(c.gone, ":KUBE-SERVICES") {
				if strings.Contains(left, g) {
					t.Errorf("k3s's cleanup left %q:\n%s", g, left)
				}
			}
		})
	}
}
