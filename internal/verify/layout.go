package verify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// footprint is one skeleton the expected backend may be judged by.
type footprint struct{ want *rules.Ruleset }

// judge holds what verify requires of the expected backend: the layout of
// the node's Kubernetes minor when it is known; the shared invariants when
// the minor is newer than any known one; every known layout, falling back
// to the invariants, when the version is unknown. It never fails a healthy
// node only because its layout is newer than the model.
type judge struct {
	layouts    []footprint
	invariants *footprint // judged when no layout fits (nil: layouts decide)
	families   []rules.Family
	why        string
	newer      rke2.KubeVersion
	g          group // for the fixes' words
}

func newJudge(opts Options) (*judge, error) {
	j := &judge{families: opts.Families, why: opts.SingleStackReason, g: newGroup(opts)}
	render := func(kv rke2.KubeVersion) (footprint, error) {
		rs, err := expected.Render(expected.Options{Backend: opts.Expect, Kubernetes: kv, Families: opts.Families})
		if err != nil {
			return footprint{}, fmt.Errorf("expected rules for %s: %w", opts.Expect, err)
		}
		return footprint{want: rs}, nil
	}
	invariants := func() error {
		rs, err := expected.Invariants(opts.Expect, opts.Families)
		if err != nil {
			return err
		}
		j.invariants = &footprint{want: rs}
		return nil
	}
	if opts.ProxyMode == ProxyModeIPVS {
		// One ipvs layout for every known minor that has ipvs mode.
		rs, err := expected.RenderIPVS(expected.Options{Backend: opts.Expect, Families: opts.Families})
		if err != nil {
			return nil, fmt.Errorf("expected ipvs-mode rules for %s: %w", opts.Expect, err)
		}
		j.layouts = []footprint{{want: rs}}
		return j, nil
	}
	switch kv := opts.Kubernetes; {
	case expected.NewerThanKnown(kv):
		j.newer = kv
		return j, invariants()
	case kv.Known():
		fp, err := render(kv)
		j.layouts = []footprint{fp}
		return j, err
	}
	for _, kv := range expected.Candidates(opts.Expect) {
		fp, err := render(kv)
		if err != nil {
			return nil, err
		}
		j.layouts = append(j.layouts, fp)
	}
	return j, invariants()
}

// findings judges live: the findings, and a note saying what live was
// judged by when that is not simply the node's own minor.
func (j *judge) findings(live *rules.Ruleset) ([]Finding, string) {
	note := ""
	if len(j.families) == 1 {
		note = fmt.Sprintf("this node has no usable IPv6 (%s), so kube-proxy runs single-stack: only the %s rules are required", j.why, j.families[0])
	}
	var best []Finding
	for i, fp := range j.layouts {
		f := j.g.missingSkeleton(fp.want, live)
		if len(f) == 0 {
			return nil, note
		}
		if i == 0 || len(f) < len(best) {
			best = f
		}
	}
	if j.invariants == nil {
		return best, note
	}
	f := j.g.missingSkeleton(j.invariants.want, live)
	if j.newer.Known() {
		return f, join(note, fmt.Sprintf("Kubernetes %s is newer than every minor this verify knows (newest %s): judged only what every known layout shares (tables, hooks, base-chain jumps, Service dispatch), not the full skeleton",
			j.newer, expected.Newest))
	}
	if len(f) == 0 {
		return nil, join(note, "Kubernetes version unknown and the rules match no known layout: judged only what every known layout shares (tables, hooks, base-chain jumps, Service dispatch); pass --kubernetes for the full check")
	}
	return f, join(note, "Kubernetes version unknown: judged what every known layout shares; pass --kubernetes for the full check")
}

func join(a, b string) string {
	return strings.TrimPrefix(a+"; "+b, "; ")
}
