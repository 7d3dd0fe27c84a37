// Package plan is the record apply leaves for verify and for operators:
// /run/rke2-proxy-backend/plan.json holds what RKE2 was given (Applied),
// the decision behind it and the plans that were refused on the way.
package plan

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"

// Schema versions plan.json for every reader (verify, check, watch, switch,
// cleanup, facts' earlier-plan check, operators' scripts). Raise it only when
// a key is removed, renamed or changes meaning; adding a key keeps it.
//
// Schema 2 added "applied": schema 1's decision named the backend apply
// meant even when it wrote nothing, and every reader took it as the one
// RKE2 runs. Parse still reads schema 1 (see v1.go) for one release: a
// package upgraded on a running node leaves its plan in /run until RKE2's
// next start.
const Schema = 2

// Plan is the JSON document at hostfs.PlanFile (tmpfs: gone after a reboot).
type Plan struct {
	// Schema is written by Marshal as the Schema it knows.
	Schema int `json:"schema"`
	// Applied is what RKE2 was given: the only part of the plan a reader may
	// take as the backend kube-proxy runs with.
	Applied Applied `json:"applied"`
	// Decision is the decision apply carried out, or tried to: when Applied
	// names no backend, or another one, it was not applied.
	Decision Decision `json:"decision"`
	// Refused are the plans apply gave up on this run, in order, with why:
	// an automatic choice the kernel rejected (apply fell forward to
	// Decision) or the operator's backend the host cannot run.
	Refused []Refusal `json:"refused,omitempty"`
	// FellForward says why Decision replaced an automatic plan ("" when it
	// did not): the reason in apply's log and the journal.
	FellForward string `json:"fell_forward,omitempty"`
	// Trial is what apply's trial said of the backend RKE2 was given (of
	// Decision's when none was); nil when no trial ran (apply --no-trial,
	// --root, or an earlier refusal).
	Trial *Trial `json:"trial,omitempty"`
	// ModulesLoaded and ModulesMissing report the module preload.
	ModulesLoaded  []string `json:"modules_loaded"`
	ModulesMissing []string `json:"modules_missing,omitempty"`
	// Warnings are problems apply reported but did not stop on (a missing
	// module, a later RKE2 drop-in that wipes ours, on_failure: warn).
	Warnings []string `json:"warnings,omitempty"`
	// Kubernetes is the Kubernetes minor apply saw, e.g. "v1.31" ("" unknown).
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Who gave RKE2 the applied backend.
const (
	// ByApply: this run wrote the drop-in (or found it already as it
	// would write it).
	ByApply = "apply"
	// ByEarlierRun: the drop-in an earlier run wrote, which this run could
	// neither replace nor remove (a read-only /etc): RKE2 reads it, not
	// Decision.
	ByEarlierRun = "earlier-run"
	// ByAdopt: nothing was written; kube-proxy already ran on the backend
	// when adopt recorded it.
	ByAdopt = "adopt"
)

// Applied is what RKE2 was given.
type Applied struct {
	// Backend is the backend of the drop-in RKE2 reads, or (By adopt) the
	// one kube-proxy already ran on. "" when RKE2 was given none of ours:
	// Nothing then says why and what RKE2 reads instead.
	Backend backend.Backend `json:"backend,omitempty"`
	// ProxyMode is kube-proxy's mode with it (iptables, nftables or ipvs).
	ProxyMode string `json:"proxy_mode,omitempty"`
	// DropIn is the drop-in's host path ("" when none of ours is there).
	DropIn string `json:"drop_in,omitempty"`
	// By is ByApply, ByEarlierRun or ByAdopt ("" with no backend).
	By string `json:"by,omitempty"`
	// Nothing says why no backend of ours was given and what RKE2 reads
	// instead ("" when Backend is set).
	Nothing string `json:"nothing,omitempty"`
}

// Refusal is a plan apply did not carry out.
type Refusal struct {
	// Backend is the backend planned ("" when the refusal did not name one,
	// e.g. an RKE2 pin decide refused).
	Backend backend.Backend `json:"backend,omitempty"`
	// Plan says whose plan it was, in words: "the generator's plan (apply
	// --backend)", "auto", or the operator's setting ("backend:
	// iptables-legacy in /etc/rke2-proxy-backend/config.yaml").
	Plan string `json:"plan"`
	// Explicit is set for the operator's own backend: on_failure decides
	// what follows its refusal, never a silent replacement.
	Explicit bool `json:"explicit,omitempty"`
	// Why is what showed the host cannot run it (a trial's failure, a
	// missing kernel feature).
	Why string `json:"why"`
}

// Trial is one backend's trial: kube-proxy's rules for one service loaded
// by the backend's own loader into a throwaway network namespace.
type Trial struct {
	Backend backend.Backend `json:"backend"`
	// Result is TrialPassed, TrialUnproven, TrialSkipped or TrialRejected.
	Result string `json:"result"`
	// Why is what the loader or the kernel said ("" when it passed).
	Why string `json:"why,omitempty"`
}

// What a trial showed. Only "passed" is proof; "unproven" (the trial ran
// out of time, waited out the xtables lock, was killed) and "skipped" (no
// trial could run: not root) leave the plan standing without it.
const (
	TrialPassed   = "passed"
	TrialUnproven = "unproven"
	TrialSkipped  = "skipped"
	TrialRejected = "rejected"
)

// Wrote is the Applied record of a drop-in apply wrote at dropIn (a host
// path) for d.
func Wrote(d Decision, dropIn string) Applied {
	return Applied{Backend: d.Backend, ProxyMode: d.ProxyMode, DropIn: dropIn, By: ByApply}
}

// AppliedBackend is the backend RKE2 was given, "" when none of ours.
func (p Plan) AppliedBackend() backend.Backend { return p.Applied.Backend }

// Carried reports whether RKE2 was given Decision itself (not an earlier
// run's drop-in, not nothing): only then do the decision's source and
// reasons describe what runs.
func (p Plan) Carried() bool {
	a := p.Applied
	return a.Backend != "" && a.By != ByEarlierRun && a.Backend == p.Decision.Backend
}
