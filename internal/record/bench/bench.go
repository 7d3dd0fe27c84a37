// Package bench is the bench state file: what each backend's rule load
// cost on this node, at which size, with which kernel and loader binaries.
// bench writes it; facts reads it for detect and for auto's opt-in
// "cheapest" choice. It holds no measuring code, so the boot-time readers
// stay small.
package bench

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// MaxSize bounds the state file: a few backends and tools fit in a few KiB;
// anything far larger is not ours.
const MaxSize = 64 << 10

// Steps, in the order bench runs them.
const (
	// StepFull is kube-proxy's full sync: every rule of N services in one
	// restore per family (iptables) or one nft transaction per family.
	StepFull = "full"
	// StepPartial is a partial sync after one service's endpoint moved.
	StepPartial = "partial"
)

// Schema versions the state file: readers refuse any other. Raise it when
// a field changes meaning; a file of another schema is measured again,
// never guessed at (a bench result costs a minute to remake).
const Schema = 1

// Report is one bench run: the document `bench -o json` prints and the
// state file holds.
type Report struct {
	// Schema is the file's schema (Schema); Encode sets it.
	Schema int `json:"schema"`
	// Services is N, the cluster size measured.
	Services int `json:"services"`
	// Kernel is the kernel release the run measured.
	Kernel string `json:"kernel"`
	// MeasuredAt is when the run finished (RFC 3339, UTC).
	MeasuredAt string `json:"measured_at"`
	// Tools are the loader binaries used; a changed one means measure again.
	Tools   []Tool    `json:"tools"`
	Results []Result  `json:"results"`
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Tool is one loader binary, with what identifies its version without
// running it (facts never run programs): the resolved path, size and mtime.
type Tool struct {
	Name      string `json:"name"`    // as looked up in PATH: iptables-nft-restore, nft
	Path      string `json:"path"`    // resolved host path, e.g. /usr/sbin/xtables-nft-multi
	Version   string `json:"version"` // its --version line, for people
	Size      int64  `json:"size"`
	ModTimeNs int64  `json:"mtime_ns"`
}

// Result is one backend's figures.
type Result struct {
	Backend backend.Backend `json:"backend"`
	Steps   []Step          `json:"steps"`
}

// Step is one measured load: wall time of the loader processes and their
// CPU (user and system, from the children's rusage), summed over families.
type Step struct {
	Step        string  `json:"step"`
	WallSeconds float64 `json:"wall_seconds"`
	UserSeconds float64 `json:"user_seconds"`
	SysSeconds  float64 `json:"sys_seconds"`
	// Rules is how many rule lines the loaders were given (both families).
	Rules int `json:"rules"`
}

// Skipped is a backend bench did not measure, and why.
type Skipped struct {
	Backend backend.Backend `json:"backend"`
	Reason  string          `json:"reason"`
}

// Step returns the backend's figures for one step.
func (r Result) Step(name string) (Step, bool) {
	i := slices.IndexFunc(r.Steps, func(s Step) bool { return s.Step == name })
	if i < 0 {
		return Step{}, false
	}
	return r.Steps[i], true
}

// Result returns the figures of backend b.
func (rep Report) Result(b backend.Backend) (Result, bool) {
	i := slices.IndexFunc(rep.Results, func(r Result) bool { return r.Backend == b })
	if i < 0 {
		return Result{}, false
	}
	return rep.Results[i], true
}

// Encode is the state file's bytes: indented JSON and a final newline,
// of this Schema.
func Encode(rep Report) ([]byte, error) {
	rep.Schema = Schema
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Parse reads a state file and checks what a decision leans on: this
// Schema, a known backend per result, each once, N > 0, figures finite and
// not negative. Errors say what is wrong; the caller names the file and
// says to run bench again.
func Parse(data []byte) (Report, error) {
	var rep Report
	if len(data) > MaxSize {
		return rep, fmt.Errorf("%d bytes, more than the %d a bench result can be", len(data), MaxSize)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return Report{}, fmt.Errorf("not valid JSON: %w", err)
	}
	switch {
	case rep.Schema == 0:
		return Report{}, fmt.Errorf("no \"schema\" (written by an rke2-proxy-backend older than schema %d), so its figures are not read", Schema)
	case rep.Schema != Schema:
		return Report{}, fmt.Errorf("schema %d, and this rke2-proxy-backend reads schema %d only (written by a newer version?), so its figures are not read", rep.Schema, Schema)
	}
	if rep.Services <= 0 {
		return Report{}, fmt.Errorf("services: %d, must be more than 0", rep.Services)
	}
	seen := map[backend.Backend]bool{}
	for i, r := range rep.Results {
		if _, err := backend.Parse(string(r.Backend)); err != nil {
			return Report{}, fmt.Errorf("results[%d].backend: %w", i, err)
		}
		if seen[r.Backend] {
			return Report{}, fmt.Errorf("results[%d].backend: %s is listed twice", i, r.Backend)
		}
		seen[r.Backend] = true
		for j, s := range r.Steps {
			for _, v := range []float64{s.WallSeconds, s.UserSeconds, s.SysSeconds} {
				if !(v >= 0 && v < 1e6) { // also refuses NaN
					return Report{}, fmt.Errorf("results[%d].steps[%d]: %v seconds is not a duration", i, j, v)
				}
			}
		}
	}
	return rep, nil
}
