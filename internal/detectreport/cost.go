package detectreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// costText is the "cost" fact: the last recorded cluster size and what a
// full and a partial sync cost there, per backend this host can run, in one
// sentence; "" when nothing was measured (the line is left out, so hosts
// that never ran bench see no change).
func costText(f facts.Facts) string {
	c := f.Cost
	if c == nil {
		return ""
	}
	runnable, _ := decide.Runnable(f)
	var full, partial []string
	for _, r := range c.Results {
		if !slices.Contains(runnable, r.Backend) {
			continue
		}
		fs, okF := r.Step(bench.StepFull)
		ps, okP := r.Step(bench.StepPartial)
		if okF {
			full = append(full, fmt.Sprintf("%s %s", r.Backend, costSeconds(fs.WallSeconds)))
		}
		if okP {
			partial = append(partial, fmt.Sprintf("%s %s", r.Backend, costSeconds(ps.WallSeconds)))
		}
	}
	when := c.MeasuredAt
	if d, _, ok := strings.Cut(when, "T"); ok {
		when = d
	}
	s := fmt.Sprintf("at %d services (the last recorded size, bench of %s) a full sync takes %s", c.Services, OrUnknown(when), orNone(full))
	if len(partial) > 0 {
		s += "; a one-endpoint change " + strings.Join(partial, ", ")
	}
	if c.Stale != "" {
		return s + "; but these figures no longer describe this node (" + c.Stale + "): run `rke2-proxy-backend bench` again"
	}
	return s
}

func costSeconds(v float64) string { return fmt.Sprintf("%.2g s", v) }
