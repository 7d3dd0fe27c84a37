package prove

import (
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// syncBaseline is the last read of kube-proxy's figures a watch run made.
// A run after the first reads kube-proxy's /metrics once (it does not
// wait), so whether kube-proxy's failure counters still rise is told by
// comparing with the run before.
type syncBaseline struct {
	figures *kubeproxy.Figures
	at      time.Time
}

// judge adds to r, a run that ended at now, what rose since the baseline,
// and makes r's read the baseline. A run that could not read the figures
// keeps the older baseline: it says nothing about kube-proxy's counters.
func (b *syncBaseline) judge(now time.Time, r *verify.Result) {
	if r.KubeProxy == nil {
		return
	}
	if b.figures != nil {
		r.AddSyncFailures(b.figures, now.Sub(b.at), now)
	}
	b.figures, b.at = r.KubeProxy, now
}
