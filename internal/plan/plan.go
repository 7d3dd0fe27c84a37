// Package plan is the record apply leaves for verify and for operators:
// /run/rke2-proxy-backend/plan.json holds the decision and what was applied.
package plan

// Plan is the JSON document at hostfs.PlanFile (tmpfs: gone after a reboot).
type Plan struct {
	Decision Decision `json:"decision"`
	// DropIn is the RKE2 drop-in written ("" in dry runs or when nothing was needed).
	DropIn string `json:"drop_in,omitempty"`
	// ModulesLoaded and ModulesMissing report the module preload.
	ModulesLoaded  []string `json:"modules_loaded"`
	ModulesMissing []string `json:"modules_missing,omitempty"`
	// Warnings are problems apply reported but did not stop on (a missing
	// module, a later RKE2 drop-in that wipes ours, on_failure: warn).
	Warnings []string `json:"warnings,omitempty"`
	// Kubernetes is the Kubernetes minor apply saw, e.g. "v1.31" ("" unknown).
	Kubernetes string `json:"kubernetes,omitempty"`
}
