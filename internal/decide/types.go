// Package decide is the pure heart of the tool: from facts and the operator
// config it picks the backend kube-proxy must use and says why, in plain
// sentences, in order. Same inputs, same decision; no I/O.
package decide

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"

// Sources of a decision, beyond the config package's auto/config/env/cmdline.
const SourceRKE2Config = "rke2-config"

// Decision is the record plan keeps: decide fills it, apply carries it out
// and writes it to plan.json, and facts, verify and nodecheck read it back
// through plan. It lives in package plan so that facts, which decide reads,
// can use plan's reader without an import cycle.
type Decision = plan.Decision
