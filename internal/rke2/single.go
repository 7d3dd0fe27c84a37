package rke2

import "slices"

// LastExcept is a single-value key's setting as the merge would leave it
// without the files in skip: its last replacing assignment elsewhere. A
// caller that writes the key itself asks this to find the operator's own
// choice, which the merged value hides once our drop-in is merged last (an
// operator's prefer-bundled-bin: false in config.yaml would otherwise read
// as ours). ok is false when no other file sets it. An Effective built by
// hand, without Assigned, answers from Origin.
func (e Effective) LastExcept(key string, skip ...string) (s Setting, ok bool) {
	history, known := e.Assigned[key]
	if !known {
		v, set := e.Values[key]
		if !set || slices.Contains(skip, e.Origin[key]) {
			return Setting{}, false
		}
		return Setting{Value: toText(v), File: e.Origin[key], Line: e.Line[key]}, true
	}
	for i := len(history) - 1; i >= 0; i-- {
		if !slices.Contains(skip, history[i].File) {
			return history[i], true
		}
	}
	return Setting{}, false
}
