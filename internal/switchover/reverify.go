package switchover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/prove"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// reverifyTimeout bounds each systemctl call of Reverify.
const reverifyTimeout = 30 * time.Second

// Reverify is the last step of a cleanup that removed something: verify,
// as the verify unit runs it (the plan's backend, the operator config),
// without waiting and without storing; when it passes and the verify unit
// had failed, or is running (an RKE2 start just pulled it in, and it may
// judge what cleanup removed), the unit is restarted without blocking, so
// its state, status.json, check and the Node condition follow the fixed
// node rather than wait for RKE2's next start. A node still failing keeps
// its failed unit: the findings say why.
func Reverify(ctx context.Context, root hostfs.Root, configFile string, kind distro.Kind) *cleanup.Reverified {
	// NoStatus: this run stores nothing, so it marks no run in progress
	// either (check would then say a verify ended without its result).
	c, err := prove.Load(root, configFile, prove.Flags{Distribution: kind, NoStatus: true})
	if err != nil {
		return &cleanup.Reverified{Verdict: "not run: " + err.Error()}
	}
	res, err := c.Verify(ctx, 0, nil)
	switch {
	case err != nil:
		return &cleanup.Reverified{Verdict: "not run: " + err.Error()}
	case res == nil:
		return &cleanup.Reverified{Verdict: "not run: nothing to verify"}
	}
	out := &cleanup.Reverified{Verdict: res.Verdict}
	for _, f := range res.Findings {
		out.Findings = append(out.Findings, fmt.Sprintf("[%s] %s (fix: %s)", f.Kind, f.Message, f.Fix))
	}
	if res.Verdict != verify.VerdictOK {
		return out
	}
	sc, err := SystemctlUnder(root, reverifyTimeout)
	if err != nil {
		return out
	}
	state, _, _ := sc.output(ctx, "show", "-P", "ActiveState", units.VerifyUnit)
	state = strings.TrimSpace(state)
	if state != "failed" && state != "activating" {
		return out
	}
	was := map[string]string{"failed": "had failed on what was removed", "activating": "was judging the node as it was"}[state]
	if _, err := sc.run(ctx, "restart", "--no-block", units.VerifyUnit); err != nil {
		out.Unit = fmt.Sprintf("%s %s and could not be started again: %v (systemctl restart %[1]s)", units.VerifyUnit, was, err)
		return out
	}
	out.Unit = fmt.Sprintf("%s %s: started it again (systemctl status %[1]s)", units.VerifyUnit, was)
	return out
}
