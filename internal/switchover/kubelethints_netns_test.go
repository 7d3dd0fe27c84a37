package switchover

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// kubeletLeft lists kubelet's chains in iptables backend b as
// "family table chain (N rules)".
func kubeletLeft(t *testing.T, b backend.Backend) []string {
	t.Helper()
	rs, err := cleanup.Read(context.Background(), cleanup.Exec, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tb := range rs.Tables {
		for _, c := range tb.Chains {
			if ownership.Of(tb.Name, c.Name) == ownership.Kubelet {
				out = append(out, string(tb.Family)+" "+tb.Name+" "+c.Name)
			}
		}
	}
	return out
}

// A switch legacy -> iptables-nft on a node whose kubelet wrote its chains
// in legacy at boot. With the host's iptables alternative moved first (as
// verify advises), the restarted kubelet writes them in nft and the switch
// removes the old kubelet's from legacy: verify, as the verify unit runs
// it (no override), passes with no warning, and KUBE-FIREWALL (shared with
// kube-proxy, holding a rule) stays. With the alternative not moved, the
// live kubelet's chains stay in legacy, the log says what fixes it, the
// switch ends with ErrStillFailing (no rollback), and verify's one finding
// is that hint.
func TestSwitchTidiesKubeletHintsInNetns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kubeletIn backend.Backend
	}{
		{"alternative moved", backend.IptablesNFT},
		{"alternative not moved", backend.IptablesLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			from, to := backend.IptablesLegacy, backend.IptablesNFT
			root := rootWithConfig(t, "backend: iptables-legacy\n", 0o644)
			// The boot: kubelet with a legacy alternative, kube-proxy in legacy.
			if err := kubeletChains(from); err != nil {
				t.Fatal(err)
			}
			if err := loadKubeProxy(from); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			s := &Switch{
				From: from, To: to,
				Config:    FileConfig{Root: root, File: hostfs.ConfigFile},
				Restarter: &simulatedRKE2{t: t, root: root, kubeletIn: tc.kubeletIn},
				Verifier:  LiveVerifier{Root: hostfs.New("/"), Wait: 2 * time.Second, Poll: 100 * time.Millisecond},
				Cleaner:   LiveCleaner{},
				Hints:     LiveHints{},
				Journal:   switchjournal.File{Root: root},
				Log:       &log,
			}
			err := s.Run(context.Background())
			t.Logf("log:\n%s", log.String())
			// Done either way; a node left failing verify says so (exit 1).
			if tc.kubeletIn == to && err != nil || tc.kubeletIn != to && !errors.Is(err, ErrStillFailing) {
				t.Fatalf("switch: %v", err)
			}

			reader := netfilter.NewSystem(hostfs.New("/"))
			res, err := verify.Run(context.Background(), verify.Options{Expect: to, Reader: reader})
			if err != nil {
				t.Fatal(err)
			}
			kept := kubeletLeft(t, from)
			left := strings.Join(kept, "; ")
			if !strings.Contains(left, "ipv4 filter KUBE-FIREWALL") {
				t.Errorf("KUBE-FIREWALL (shared, with a rule) was removed from legacy: %s", left)
			}
			if tc.kubeletIn == to {
				for _, k := range kept {
					if !strings.HasSuffix(k, " filter KUBE-FIREWALL") {
						t.Errorf("kubelet's %s left in legacy; want only KUBE-FIREWALL", k)
					}
				}
				if !strings.Contains(log.String(), "removed 8 chain(s) the previous kubelet left") {
					t.Errorf("log does not list the 8 removed chains (hint and 3 canaries, 2 families)")
				}
				if !res.OK || len(res.Warnings) > 0 {
					t.Errorf("verify after the switch: %s, findings %+v, warnings %+v; want ok and no warning", res.Verdict, res.Findings, res.Warnings)
				}
				if strings.Contains(log.String(), "warning:") {
					t.Errorf("a warning in the log of a clean switch")
				}
				return
			}
			if !strings.Contains(left, "ipv4 mangle KUBE-IPTABLES-HINT") || !strings.Contains(left, "ipv6 nat KUBE-KUBELET-CANARY") {
				t.Errorf("the live kubelet's chains were removed from legacy: %s", left)
			}
			if !strings.Contains(log.String(), "warning: kubelet's chains left in place") || !strings.Contains(log.String(), "update-alternatives --set iptables /usr/sbin/iptables-nft") {
				t.Errorf("the log does not name the kept chains and the alternative's fix")
			}
			var kinds []string
			for _, f := range res.Findings {
				kinds = append(kinds, f.Kind)
			}
			if strings.Join(kinds, ",") != verify.KindKubeletHint {
				t.Errorf("verify findings %v; want the kubelet hint alone", kinds)
			}
		})
	}
}

// hintPlan never plans a chain that holds rules or is jumped to, and only
// in the families kubelet has written elsewhere.
func TestHintPlanKeepsWhatIsNotKubeletsShape(t *testing.T) {
	rs := &rules.Ruleset{Backend: backend.IptablesLegacy, Tables: []rules.Table{
		{Family: rules.IPv4, Name: "mangle", Chains: []rules.Chain{
			{Name: "PREROUTING", Rules: []rules.Rule{{Text: "-j KUBE-KUBELET-CANARY", Jump: "KUBE-KUBELET-CANARY"}}},
			{Name: "KUBE-IPTABLES-HINT"},
			{Name: "KUBE-KUBELET-CANARY"},
		}},
		{Family: rules.IPv4, Name: "nat", Chains: []rules.Chain{{Name: "KUBE-KUBELET-CANARY", Rules: []rules.Rule{{Text: "-j RETURN"}}}}},
		{Family: rules.IPv6, Name: "mangle", Chains: []rules.Chain{{Name: "KUBE-IPTABLES-HINT"}}},
	}}
	p, left := hintPlan(rs, []rules.Family{rules.IPv4})
	if got := p.Scripts[rules.IPv4]; got != "*mangle\n-X KUBE-IPTABLES-HINT\nCOMMIT\n" {
		t.Errorf("ipv4 script %q", got)
	}
	if _, ok := p.Scripts[rules.IPv6]; ok || len(left) != 3 {
		t.Errorf("ipv6 script planned or left %q; want the jumped-to canary, the canary with a rule and the ipv6 hint kept", left)
	}
}
