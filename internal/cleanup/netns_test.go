package cleanup

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// snapshot is a backend's whole state as its own tool prints it, minus the
// save tools' date comments.
func snapshot(t *testing.T, b backend.Backend) string {
	t.Helper()
	if b == backend.NFTables {
		return nstest.Sh(t, "nft list tables | grep -w kube-proxy | while read -r _ fam name; do nft list table $fam $name; done")
	}
	flavour := "legacy"
	if b == backend.IptablesNFT {
		flavour = "nft"
	}
	out := nstest.Sh(t, "iptables-"+flavour+"-save; ip6tables-"+flavour+"-save")
	return regexp.MustCompile(`(?m)^#.*\n`).ReplaceAllString(out, "")
}

// cleanup leaves the stranded backend without kube-proxy objects, keeps
// kubelet's chains and other chains, and does not change the chosen
// backend by one byte.
func TestCleanupInNetns(t *testing.T) {
	cases := []struct{ chosen, stranded backend.Backend }{
		{backend.IptablesNFT, backend.IptablesLegacy},
		{backend.IptablesLegacy, backend.IptablesNFT},
		{backend.NFTables, backend.IptablesNFT},
		{backend.IptablesNFT, backend.NFTables},
	}
	for _, c := range cases {
		t.Run(string(c.stranded)+" next to "+string(c.chosen), func(t *testing.T) {
			ref := nstest.RefDir(t)
			if !nstest.InNetns(t) {
				return
			}
			nstest.Tool(t, "nfacct")
			if c.stranded != backend.NFTables {
				nstest.Sh(t, "sh "+filepath.Join(ref, "derived/simulate-startup.sh")+" "+c.stranded.IptablesMode()+" 2>&1")
				nstest.Sh(t, "iptables-"+c.stranded.IptablesMode()+" -w -N KUBE-ROUTER-INPUT; iptables-"+c.stranded.IptablesMode()+" -w -A INPUT -j KUBE-ROUTER-INPUT")
			} else {
				nstest.Sh(t, "nft -f "+filepath.Join(ref, "derived/nftables-overall-v4.reordered.nft"))
			}
			expectedtest.Load(t, expected.Options{Backend: c.chosen, Services: 5})
			before := snapshot(t, c.chosen)

			ctx := context.Background()
			live, err := Read(ctx, Exec, c.stranded)
			if err != nil {
				t.Fatal(err)
			}
			p := Compute(live)
			if p.Empty() {
				t.Fatal("nothing to clean in the stranded backend")
			}
			if err := Apply(ctx, Exec, p); err != nil {
				t.Fatalf("%v\nscripts:\n%s%s", err, p.Scripts[rules.IPv4], p.Scripts[rules.IPv6])
			}
			after, err := Read(ctx, Exec, c.stranded)
			if err != nil {
				t.Fatal(err)
			}
			if o := ownership.Find(after, c.stranded == backend.NFTables); !o.Empty() {
				t.Errorf("kube-proxy objects left in %s: %+v", c.stranded, o)
			}
			if again := Compute(after); !again.Empty() {
				t.Errorf("a second cleanup would remove %q", again.Removals)
			}
			// verify agrees: nothing stranded, the chosen backend complete.
			res, err := verify.Run(ctx, verify.Options{Expect: c.chosen, Reader: verify.NewReader(hostfs.New("/"))})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Kind != verify.KindKubeletHint {
					t.Errorf("verify after cleanup: [%s] %s", f.Kind, f.Message)
				}
			}
			if got := snapshot(t, c.chosen); got != before {
				t.Errorf("the chosen backend %s changed:\n--- before\n%s\n--- after\n%s", c.chosen, before, got)
			}
			if c.stranded != backend.NFTables {
				left := snapshot(t, c.stranded)
				check.Says(t, "what cleanup left (not kube-proxy's, so kept)", left, ":KUBE-IPTABLES-HINT", ":KUBE-KUBELET-CANARY", ":KUBE-FIREWALL", "-A INPUT -j KUBE-FIREWALL", "-A INPUT -j KUBE-ROUTER-INPUT", "block incoming localnet connections")
			}
		})
	}
}
