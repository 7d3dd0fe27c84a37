package apply

import (
	"context"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// trialAndDecide proves the decided backend by loading kube-proxy's
// one-service footprint into a throwaway network namespace (o.Trial,
// Trial by default). A backend the kernel rejects is one the host cannot
// run: it goes into the facts, and the decision is made again (an override
// is refused with what failed, auto picks another, the generator's
// --backend plan becomes a problem for on_failure). A backend that fails
// again, or a decision that keeps it anyway (RKE2's own pin), is a problem
// too.
func (o PrepareOptions) trialAndDecide(ctx context.Context, f facts.Facts, cfg config.Config, d decide.Decision, problems []string) (facts.Facts, decide.Decision, []string) {
	forced := o.Forced
	if forced != "" && d.Backend != forced {
		return f, d, problems // the plan is already refused; nothing to prove
	}
	trial := o.Trial
	if trial == nil {
		trial = Trial
	}
	fresh := d
	for range backend.All {
		if d.Disabled || d.Backend == "" {
			return f, d, problems
		}
		if why, failed := f.TrialFailed[string(d.Backend)]; failed {
			return f, d, append(problems, fmt.Sprintf("%s cannot run on this host: %s", d.Backend, why))
		}
		r := trial(ctx, d.Backend, f.RKE2.Kubernetes)
		switch {
		case r.Skipped != "":
			o.log("trial of %s skipped: %s", d.Backend, r.Skipped)
			return f, d, problems
		case r.Failure == "":
			o.log("trial of %s: kube-proxy's rules for one service loaded in a throwaway network namespace", d.Backend)
			return f, d, problems
		}
		o.log("[failed]   trial of %s: %s", d.Backend, r.Failure)
		if f.TrialFailed == nil {
			f.TrialFailed = map[string]string{}
		}
		f.TrialFailed[string(d.Backend)] = r.Failure
		if forced != "" {
			d, problems = decide.Force(f, cfg, fresh, forced)
			return f, d, problems
		}
		d = decide.Decide(f, cfg)
	}
	return f, d, problems
}
