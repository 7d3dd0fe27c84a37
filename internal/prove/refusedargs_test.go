package prove

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// A 1.38 node whose operator config still passes the removed
// NFTablesProxyMode gate: kube-proxy does not start, verify fails on the
// missing rules, and names the item to remove; an ok result, and the same
// item on 1.37 (which accepts it), get nothing.
func TestAddRefusedKubeProxyArgs(t *testing.T) {
	const gate = "feature-gates=NFTablesProxyMode=true"
	h := testhost.New(t).Debian12().RKE2v138().KubeProxyArgs("config.yaml", false, gate)
	res := &verify.Result{Verdict: verify.VerdictFailed, Findings: []verify.Finding{{Kind: "missing-chain"}}}
	AddRefusedKubeProxyArgs(h.Root(), "", addOnFacts(h.Root(), distro.RKE2, ""), res)
	var got *verify.Finding
	for i := range res.Findings {
		if res.Findings[i].Kind == KindRefusedKubeProxyArg {
			got = &res.Findings[i]
		}
	}
	if got == nil || !strings.Contains(got.Message, "/etc/rancher/rke2/config.yaml line 2") || !strings.Contains(got.Message, "NFTablesProxyMode") ||
		!strings.Contains(got.Fix, "remove that item") || res.Verdict != verify.VerdictFailed {
		t.Fatalf("1.38: findings %+v, verdict %s", res.Findings, res.Verdict)
	}

	ok := &verify.Result{Verdict: verify.VerdictOK}
	AddRefusedKubeProxyArgs(h.Root(), "", addOnFacts(h.Root(), distro.RKE2, ""), ok)
	if len(ok.Findings) != 0 || ok.Verdict != verify.VerdictOK {
		t.Errorf("an ok result got %+v", ok.Findings)
	}

	old := testhost.New(t).Debian12().RKE2v137().KubeProxyArgs("config.yaml", false, gate)
	res = &verify.Result{Verdict: verify.VerdictFailed}
	AddRefusedKubeProxyArgs(old.Root(), "", addOnFacts(old.Root(), distro.RKE2, ""), res)
	for _, f := range res.Findings {
		if f.Kind == KindRefusedKubeProxyArg {
			t.Errorf("1.37 accepts the gate, yet: %+v", f)
		}
	}
}
