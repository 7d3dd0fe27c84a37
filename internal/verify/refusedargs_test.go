package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A 1.38 node whose operator config still passes the removed
// NFTablesProxyMode gate: kube-proxy does not start, verify fails on the
// missing rules, and names the item to remove; an ok result, and the same
// item on 1.37 (which accepts it), get nothing.
func TestAddRefusedKubeProxyArgs(t *testing.T) {
	const gate = "feature-gates=NFTablesProxyMode=true"
	h := testhost.New(t).Debian12().RKE2v138().KubeProxyArgs("config.yaml", false, gate)
	res := &Result{Verdict: VerdictFailed, Findings: []Finding{{Kind: "missing-chain"}}}
	AddRefusedKubeProxyArgs(h.Root(), "", addOnFacts(h.Root(), distro.RKE2, ""), res)
	var got *Finding
	for i := range res.Findings {
		if res.Findings[i].Kind == KindRefusedKubeProxyArg {
			got = &res.Findings[i]
		}
	}
	if got == nil || !strings.Contains(got.Message, "/etc/rancher/rke2/config.yaml line 2") || !strings.Contains(got.Message, "NFTablesProxyMode") ||
		!strings.Contains(got.Fix, "remove that item") || res.Verdict != VerdictFailed {
		t.Fatalf("1.38: findings %+v, verdict %s", res.Findings, res.Verdict)
	}

	ok := &Result{Verdict: VerdictOK}
	AddRefusedKubeProxyArgs(h.Root(), "", addOnFacts(h.Root(), distro.RKE2, ""), ok)
	if len(ok.Findings) != 0 || ok.Verdict != VerdictOK {
		t.Errorf("an ok result got %+v", ok.Findings)
	}

	old := testhost.New(t).Debian12().RKE2v137().KubeProxyArgs("config.yaml", false, gate)
	res = &Result{Verdict: VerdictFailed}
	AddRefusedKubeProxyArgs(old.Root(), "", addOnFacts(old.Root(), distro.RKE2, ""), res)
	for _, f := range res.Findings {
		if f.Kind == KindRefusedKubeProxyArg {
			t.Errorf("1.37 accepts the gate, yet: %+v", f)
		}
	}
}
