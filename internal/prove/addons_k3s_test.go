package prove

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// On k3s the add-ons judge k3s's files: a 1.38 k3s whose config still
// passes the removed NFTablesProxyMode gate gets the item of
// /etc/rancher/k3s/config.yaml to remove, in k3s's words (the release
// from k3s's binary: its data dir names none). Probing RKE2's paths, as
// verify did, found no config and no release, and said nothing.
func TestAddOnsJudgeK3sFiles(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sBinary("/usr/local/bin/k3s", "v1.38.0+k3s1").
		K3sConfig("config.yaml", "kube-proxy-arg:\n- feature-gates=NFTablesProxyMode=true\n")
	c := &Command{Host: verify.Host{Root: h.Root()}}
	res := &verify.Result{Expect: backend.IptablesNFT, Verdict: verify.VerdictFailed, Findings: []verify.Finding{{Kind: "missing-chain"}}}
	c.addOns(context.Background(), verify.Options{Expect: backend.IptablesNFT, Distribution: distro.Kind("k3s"), Units: []string{"k3s.service"}}, res)
	var got *verify.Finding
	for i := range res.Findings {
		if res.Findings[i].Kind == KindRefusedKubeProxyArg {
			got = &res.Findings[i]
		}
	}
	if got == nil || !strings.Contains(got.Message, "/etc/rancher/k3s/config.yaml line 1") || !strings.Contains(got.Message, "NFTablesProxyMode") ||
		!strings.Contains(got.Fix, "restart k3s") || strings.Contains(got.Fix, "RKE2") || res.Verdict != verify.VerdictFailed {
		t.Fatalf("k3s 1.38: findings %+v, verdict %s: want k3s's config item to remove, in k3s's words", res.Findings, res.Verdict)
	}
}
