package bench

import (
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Merge adds a run that measured some backends to an earlier report: when
// both measured the same N on the same kernel, the earlier figures of the
// backends the new run did not measure are kept (bench --backend B refreshes
// one backend); otherwise the new run replaces the old one, since figures
// at another size or on another kernel do not compare.
func Merge(old, cur Report) Report {
	if old.Services != cur.Services || old.Kernel != cur.Kernel {
		return cur
	}
	out := cur
	out.Results = append([]Result{}, cur.Results...)
	out.Tools = append([]Tool{}, cur.Tools...)
	out.Skipped = nil
	measured := func(b Result) bool {
		return slices.ContainsFunc(cur.Results, func(r Result) bool { return r.Backend == b.Backend })
	}
	for _, r := range old.Results {
		if !measured(r) {
			out.Results = append(out.Results, r)
		}
	}
	for _, t := range old.Tools {
		if !slices.ContainsFunc(out.Tools, func(u Tool) bool { return u.Name == t.Name }) {
			out.Tools = append(out.Tools, t)
		}
	}
	for _, s := range append(append([]Skipped{}, old.Skipped...), cur.Skipped...) {
		if !slices.ContainsFunc(out.Results, func(r Result) bool { return r.Backend == s.Backend }) &&
			!slices.ContainsFunc(out.Skipped, func(k Skipped) bool { return k.Backend == s.Backend }) {
			out.Skipped = append(out.Skipped, s)
		}
	}
	slices.SortFunc(out.Results, func(a, b Result) int {
		return slices.Index(backend.All, a.Backend) - slices.Index(backend.All, b.Backend)
	})
	return out
}
