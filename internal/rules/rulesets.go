package rules

import (
	"encoding/json"
	"strings"
)

// Rulesets are several backends' rules as `render` prints them: canonical
// text (Format) one after the other, or as JSON each sorted (Normalize),
// so the two forms list the same objects in the same order.
type Rulesets []*Ruleset

// Text is each ruleset's canonical text, in order.
func (s Rulesets) Text() string {
	var b strings.Builder
	for _, rs := range s {
		b.WriteString(Format(rs))
	}
	return b.String()
}

// MarshalJSON writes the list (never null) of the sorted rulesets.
func (s Rulesets) MarshalJSON() ([]byte, error) {
	sorted := make([]*Ruleset, len(s))
	for i, rs := range s {
		sorted[i] = Normalize(rs)
	}
	return json.Marshal(sorted)
}
