package apply

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// Which backend RKE2 is given when the plan cannot run. RKE2 is never
// told a backend the host cannot run, and never left on its own defaults
// while apply knows a backend that works (on the NAS kernel those defaults
// are exactly the nft that crash-loops kube-proxy):
//   - an automatic plan (the generator's --backend, or apply's own decision
//     when the operator names no backend) that the kernel rejects falls
//     forward: apply decides again without it, proves the new choice by
//     trial and carries that out, saying why; on_failure is not asked;
//   - the operator's own backend (config, environment, kernel command line,
//     RKE2's pin) is never replaced silently: apply finds the backend that
//     works, and on_failure decides whether RKE2 starts on it (warn, with a
//     warning naming both and how to silence it) or not at all (block, the
//     message naming the one that would work);
//   - only when no backend can run is there nothing to give RKE2.
//
// A backend "cannot run" when its trial fails, when the facts rule it out,
// or when its kernel features are missing once apply has loaded its modules
// (Run asks next then).
type chooser struct {
	o   PrepareOptions
	f   facts.Facts
	cfg config.Config
	// explicit is the operator's own backend ("" when the choice is
	// automatic), who the setting that names it, in words.
	explicit backend.Backend
	who      string
	// refusedExplicit is set once the operator's backend was refused.
	refusedExplicit bool
	// trials is whether a trial proves each choice (not under --root, not
	// with --no-trial); proof says, per backend, what proved it.
	trials bool
	proof  map[backend.Backend]string
	// trial is what each backend's trial said, for the plan.
	trial map[backend.Backend]plan.Trial
	// refused and fellForward are what the plan records.
	refused     []plan.Refusal
	fellForward []string
}

// newChooser starts from the decision made now (fresh): it names the
// operator's own backend, and one decide already refused.
func newChooser(o PrepareOptions, f facts.Facts, cfg config.Config, fresh decide.Decision) *chooser {
	c := &chooser{o: o, f: f, cfg: cfg, proof: map[backend.Backend]string{}, trial: map[backend.Backend]plan.Trial{}}
	c.f.TrialFailed = maps.Clone(f.TrialFailed) // fail adds to it: the caller's stays as it was
	switch b := cfg.Backend; {
	case b != "" && b != config.Auto && b != config.Off:
		c.explicit, c.who = backend.Backend(b), cfg.BackendSetting()
	case fresh.Source == decide.SourceRKE2Config && !fresh.Disabled:
		c.explicit, c.who = fresh.Backend, fmt.Sprintf("%s's own config (%s)", o.Distribution.Name(), strings.Join(fresh.Respected, ", "))
	}
	if len(fresh.Refused) > 0 && !fresh.Disabled {
		// decide refused the operator's backend: the host cannot run it
		c.refusedExplicit = true
		who := c.who
		if who == "" {
			who = "the operator's setting"
		}
		var why []string
		for _, r := range fresh.Refused {
			why = append(why, strings.TrimPrefix(r, who+": ")) // decide's refusal opens with the setting
		}
		c.refused = append(c.refused, plan.Refusal{Backend: c.explicit, Plan: who, Explicit: true, Why: strings.Join(why, "; ")})
	}
	return c
}

// first is the decision to prove first: the generator's plan
// (PrepareOptions.Forced) when the facts read now do not rule it out,
// else the decision made now. A generator's plan they rule out is
// refused like one whose trial fails.
func (c *chooser) first(fresh decide.Decision) decide.Decision {
	forced := c.o.Forced
	if fresh.Disabled || forced == "" || forced == fresh.Backend {
		return fresh
	}
	d, refused := decide.Force(c.f, c.cfg, fresh, forced)
	if len(refused) == 0 {
		return d
	}
	if forced == c.explicit && c.refusedExplicit {
		return fresh // the same refusal, already recorded
	}
	var why []string
	for _, r := range d.Refused {
		// decide words the refusal as of an override "backend: B in <file>"
		why = append(why, strings.TrimPrefix(r, fmt.Sprintf("backend: %s in %s: ", forced, decide.ForcedBy)))
	}
	c.refuse(forced, decide.ForcedBy, strings.Join(why, "; "))
	return fresh // decided on the same facts, without the generator's plan
}

// prove carries d through its trial. A backend the kernel rejects is
// refused and the next decision proved in its turn. It returns the
// decision to carry out, or problems (for on_failure) when none may be:
// no backend can run (the decision is the last one tried), or the
// operator's cannot and on_failure is block (the one that would work).
func (c *chooser) prove(ctx context.Context, d decide.Decision) (decide.Decision, []string) {
	trial := c.o.Trial
	if trial == nil {
		trial = Trial
	}
	for range len(backend.All) + 1 {
		if d.Disabled || d.Backend == "" {
			return d, nil
		}
		if _, failed := c.f.TrialFailed[string(d.Backend)]; failed {
			return d, c.noneRuns()
		}
		if !c.trials {
			return c.settle(d)
		}
		r := trial(ctx, d.Backend, c.f.RKE2.Kubernetes)
		switch {
		case r.Skipped != "":
			c.o.log("trial of %s skipped: %s", d.Backend, r.Skipped)
			c.prove1(d.Backend, plan.TrialSkipped, r.Skipped, "not proven: its trial was skipped, "+r.Skipped)
			return c.settle(d)
		case r.Failure == "" && r.Unproven != "":
			// Only the kernel's rejection refuses a backend: a slow first
			// boot or a held lock says nothing against the plan.
			c.o.log("trial of %s could not tell, so %s stands unproven: %s", d.Backend, d.Backend, r.Unproven)
			c.prove1(d.Backend, plan.TrialUnproven, r.Unproven, "not proven: its trial could not tell, "+r.Unproven)
			return c.settle(d)
		case r.Failure == "":
			c.o.log("trial of %s: kube-proxy's rules for one service loaded in a throwaway network namespace", d.Backend)
			c.prove1(d.Backend, plan.TrialPassed, "", "its trial passed")
			return c.settle(d)
		}
		c.o.log("[failed]   trial of %s: %s", d.Backend, r.Failure)
		c.prove1(d.Backend, plan.TrialRejected, r.Failure, "")
		d = c.fail(d, r.Failure)
	}
	return d, c.noneRuns()
}

// next is Run's way on when the kernel cannot run d once d's modules are
// loaded (why names the missing features): d is refused and the next
// decision proved.
func (c *chooser) next(ctx context.Context, d decide.Decision, why string) (decide.Decision, []string) {
	return c.prove(ctx, c.fail(d, why))
}

// fail refuses d's backend, which cannot run for why, and decides again
// without it.
func (c *chooser) fail(d decide.Decision, why string) decide.Decision {
	if c.f.TrialFailed == nil {
		c.f.TrialFailed = map[string]string{}
	}
	// decide reads TrialFailed as "cannot run here", whatever showed it
	c.f.TrialFailed[string(d.Backend)] = why
	if d.Backend == c.explicit {
		c.refusedExplicit = true
		c.refused = append(c.refused, plan.Refusal{Backend: d.Backend, Plan: c.who, Explicit: true, Why: why})
		return c.decideAgain()
	}
	who := "apply's automatic choice"
	if d.Backend == c.o.Forced {
		who = decide.ForcedBy
	}
	c.refuse(d.Backend, who, why)
	return c.decideAgain()
}

// refuse records an automatic plan the host cannot run.
func (c *chooser) refuse(b backend.Backend, who, why string) {
	c.refused = append(c.refused, plan.Refusal{Backend: b, Plan: who, Why: why})
	c.fellForward = append(c.fellForward, fmt.Sprintf("%s, %s, cannot run on this host (%s), so apply fell forward to a fresh automatic decision without it.", b, who, why))
	c.o.log("%s, %s, cannot run on this host: falling forward to a fresh automatic decision", b, who)
}

// decideAgain decides on the facts as they stand (with every refused
// backend in TrialFailed). RKE2's pin is kept by decide whatever the
// kernel says: once it is refused, the backend that works is decided
// without it.
func (c *chooser) decideAgain() decide.Decision {
	d := decide.Decide(c.f, c.cfg)
	if _, failed := c.f.TrialFailed[string(d.Backend)]; failed && d.Source == decide.SourceRKE2Config {
		cfg := c.cfg
		cfg.RespectRKE2Config = false
		d = decide.Decide(c.f, cfg)
	}
	return d
}

// settle is the end of the search: d runs as far as apply can tell. It is
// carried out, unless it replaces the operator's own backend and
// on_failure is block.
func (c *chooser) settle(d decide.Decision) (decide.Decision, []string) {
	if len(c.fellForward) > 0 {
		d.Reasons = append(append([]string{}, c.fellForward...), d.Reasons...)
	}
	if c.refusedExplicit && c.cfg.OnFailure == config.OnFailureBlock {
		return d, []string{fmt.Sprintf("%s asks for %s, which cannot run on this host: %s. %s would work (%s): set it there, or auto; or set on_failure: warn to start %s on %s with a warning",
			c.who, orName(c.explicit), c.explicitWhy(), d.Backend, c.proofOf(d.Backend), c.o.Distribution.Name(), d.Backend)}
	}
	return d, nil
}

// explicitWarning is what on_failure: warn says when RKE2 was given b in
// place of the operator's backend ("" when it was not).
func (c *chooser) explicitWarning(b backend.Backend) string {
	if !c.refusedExplicit || b == "" || b == c.explicit {
		return ""
	}
	name := c.o.Distribution.Name()
	return fmt.Sprintf("%s asks for %s, which cannot run on this host: %s. %s starts on %s instead (%s), as on_failure: warn allows. "+
		"To silence this warning, set %s (or auto) there; or set on_failure: block to keep %s from starting instead",
		c.who, orName(c.explicit), c.explicitWhy(), name, b, c.proofOf(b), b, name)
}

// explicitWhy is why the operator's backend cannot run.
func (c *chooser) explicitWhy() string {
	for _, r := range c.refused {
		if r.Explicit {
			return r.Why
		}
	}
	return "unknown"
}

// prove1 keeps what b's trial said: for the plan (result and why), and
// for apply's messages (proof, "" when it proved nothing).
func (c *chooser) prove1(b backend.Backend, result, why, proof string) {
	c.trial[b] = plan.Trial{Backend: b, Result: result, Why: why}
	if proof != "" {
		c.proof[b] = proof
	}
}

func (c *chooser) proofOf(b backend.Backend) string {
	if p := c.proof[b]; p != "" {
		return p
	}
	return "the kernel's facts allow it; no trial ran"
}

func orName(b backend.Backend) string {
	if b == "" {
		return "a backend"
	}
	return string(b)
}

// noneRuns is the problem when every backend was refused, each with why.
func (c *chooser) noneRuns() []string {
	var each []string
	seen := map[backend.Backend]bool{}
	for _, r := range c.refused {
		if r.Backend != "" && seen[r.Backend] {
			continue
		}
		seen[r.Backend] = true
		each = append(each, fmt.Sprintf("%s: %s", orName(r.Backend), r.Why))
	}
	return []string{"no backend can run on this host (" + strings.Join(each, "; ") + ")"}
}

// record writes what the plan keeps of the search: the refused plans, the
// fall-forward reason, and the warning of an operator's backend replaced.
func (c *chooser) record(p *plan.Plan) {
	p.Refused = append([]plan.Refusal{}, c.refused...)
	p.FellForward = strings.Join(c.fellForward, " ")
	// The trial of the backend carried out (or tried last): "unproven" or
	// "skipped" is never recorded as proof.
	b := p.Applied.Backend
	if b == "" {
		b = p.Decision.Backend
	}
	if t, ok := c.trial[b]; ok {
		p.Trial = &t
	} else {
		p.Trial = nil
	}
	if w := c.explicitWarning(p.Applied.Backend); w != "" && p.Applied.By == plan.ByApply {
		p.Warnings = append(p.Warnings, w)
	}
}
