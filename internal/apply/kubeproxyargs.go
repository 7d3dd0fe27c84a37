package apply

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
)

// logKubeProxyRefusals logs, before RKE2 starts, each kube-proxy-arg item
// in the operator's own RKE2 config that the Kubernetes version RKE2 is
// about to run refuses: kube-proxy would exit at start, and the file is
// the operator's, never rewritten, so the line to remove is all apply can
// give.
func logKubeProxyRefusals(refusals []kpargs.Finding, logf func(string, ...any)) {
	for _, r := range refusals {
		logf("warning: %s", r)
	}
}

// weighKubeProxyRefusals turns the refusals into on_failure's verdict, as
// for any plan apply cannot honour: block keeps RKE2 from starting into a
// kube-proxy that cannot start; warn lets it start (the drop-in is written
// as planned) and says kube-proxy will fail until the items are removed.
// An outcome already blocked keeps its own message.
func weighKubeProxyRefusals(out Outcome, refusals []kpargs.Finding, cfg config.Config, dryRun bool, name string, logf func(string, ...any)) Outcome {
	if len(refusals) == 0 || out.Verdict == Blocked {
		return out
	}
	msg := strings.Join(findingTexts(refusals), " ")
	run := "apply"
	if dryRun {
		run = "apply --dry-run"
	}
	if cfg.OnFailure == config.OnFailureBlock {
		return out.block("%s: %s's config holds kube-proxy arguments that Kubernetes %s refuses (on_failure: block, %s will not start): %s",
			run, name, refusals[0].Kubernetes, name, msg)
	}
	logf("warning: %s's config holds kube-proxy arguments that Kubernetes %s refuses (on_failure: warn, %s starts, and its kube-proxy fails until they are removed): %s",
		name, refusals[0].Kubernetes, name, msg)
	out.Verdict = Warned
	return out
}

func findingTexts(fs []kpargs.Finding) []string {
	texts := make([]string, len(fs))
	for i, f := range fs {
		texts[i] = f.String()
	}
	return texts
}
