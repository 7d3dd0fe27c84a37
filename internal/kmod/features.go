package kmod

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// MissingFeatures lists, as sentences, the kernel features backend b needs
// that this kernel lacks, judged after the module preload as decide judges
// them before it (CONTRACT point 1): a feature is there when one of its
// modules is loaded, built in or in the module tree (the kernel loads it
// on first use), or its kernel config option is y (built in). Options set
// to m whose modules are in none of those, and options set to n, count as
// missing. With neither a kernel config nor module support nothing can be
// judged and nothing is reported.
func MissingFeatures(b backend.Backend, k facts.Kernel, s State) []string {
	var out []string
	for _, req := range b.RequirementsOn(k.Major, k.Minor) {
		if hasFeature(req, k, s) {
			continue
		}
		var opts []string
		for _, o := range req.Options {
			v := k.Config[o]
			if v == "" {
				v = facts.Unknown
			}
			opts = append(opts, fmt.Sprintf("CONFIG_%s=%s", o, v))
		}
		out = append(out, fmt.Sprintf("%s: kernel %s lacks %s (%s; modules %s neither loaded, built in nor in the module tree)",
			b, orUnknown(k.Release), req.Feature, strings.Join(opts, ", "), strings.Join(req.Modules, "/")))
	}
	return out
}

func hasFeature(req backend.Requirement, k facts.Kernel, s State) bool {
	for _, m := range req.Modules {
		if s.Present(m) || s.Available[Normalize(m)] {
			return true
		}
	}
	known := false
	for _, o := range req.Options {
		switch k.Config[o] {
		case facts.Builtin:
			return true
		case facts.Module:
			// Its module should have loaded; without module support we
			// cannot tell, so give it the benefit of the doubt.
			if !s.Supported {
				return true
			}
			known = true
		case facts.Absent:
			known = true
		}
	}
	if !known {
		// No config for this feature. Without module support every feature
		// is built in or absent and we cannot tell which; with module
		// support and none of its modules present, it is missing.
		return !s.Supported || len(req.Modules) == 0
	}
	return false
}

func orUnknown(s string) string {
	if s == "" {
		return "(release unknown)"
	}
	return s
}
