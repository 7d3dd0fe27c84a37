package prove

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// KindRefusedKubeProxyArg is a kube-proxy-arg item in the operator's RKE2
// config that the release RKE2 runs refuses (a removed or locked feature
// gate, ipvs where it is off): kube-proxy does not start, so its rules are
// missing, and this names why.
const KindRefusedKubeProxyArg = "kube-proxy-refused-arg"

// AddRefusedKubeProxyArgs adds, to a result that is not ok, a finding per
// such item (decide.KubeProxyRefusals, the check apply runs before the
// start), so a node whose kube-proxy cannot start is told the line to
// remove, not only that rules are missing. f is facts.VerifyAddOnFacts of
// the node's distribution: its config, and the release judged (on RKE2 the
// one its data directory holds: the one running). Call it after Run.
func AddRefusedKubeProxyArgs(root hostfs.Root, configFile string, f facts.Facts, res *verify.Result) {
	if res == nil || res.Verdict == verify.VerdictOK {
		return
	}
	if configFile == "" {
		configFile = hostfs.ConfigFile
	}
	c, err := config.Load(root, configFile, nil, f.Cmdline)
	if err != nil {
		return // the plan verify judges was made on it: apply names the problem
	}
	var findings []verify.Finding
	for _, fd := range kpargs.Refusing(decide.KubeProxyRefusals(f, c, decide.Decision{Disabled: true})) {
		findings = append(findings, verify.Finding{Kind: KindRefusedKubeProxyArg, Message: fd.String(),
			Fix: "remove that item from " + fd.File + " (rke2-proxy-backend never edits RKE2's config), then restart RKE2"})
	}
	res.Add(findings, nil)
}
