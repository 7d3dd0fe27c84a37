// Package plan is the record apply leaves for verify and for operators:
// /run/rke2-proxy-backend/plan.json holds the decision and what was applied.
package plan

// Schema versions plan.json for every reader (verify, check, watch, switch,
// cleanup, facts' earlier-plan check, operators' scripts). Raise it only when
// a key is removed, renamed or changes meaning; adding a key keeps it.
const Schema = 1

// Plan is the JSON document at hostfs.PlanFile (tmpfs: gone after a reboot).
type Plan struct {
	// Schema is written by Marshal as the Schema it knows. A file without
	// it was written by a version from before the field existed, whose
	// layout is schema 1's: Parse reads it as 1 (a package upgrade on a
	// running node leaves such a file in /run until the next RKE2 start).
	Schema   int      `json:"schema"`
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
