package cleanup

import (
	"fmt"
	"strings"
)

// Reverified is what a cleanup that removed something says last: verify's
// verdict on the node now, as the verify unit judges it, and what became
// of that unit. Without it a cleanup that fixed what verify failed on left
// the unit failed (and check, and the Node condition) until RKE2's next
// start, which is what the README's own fix then looked like.
type Reverified struct {
	Verdict string `json:"verdict"`
	// Findings are what still fails, each with its fix.
	Findings []string `json:"findings,omitempty"`
	// Unit says what was done to the verify unit ("" for nothing).
	Unit string `json:"unit,omitempty"`
}

// Text is one line for the verdict and the unit, then one per finding.
func (r *Reverified) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	switch {
	case r.Verdict == "ok":
		b.WriteString("cleanup: verify passes now")
	case len(r.Findings) > 0:
		b.WriteString("cleanup: verify still fails:")
	default:
		fmt.Fprintf(&b, "cleanup: verify: %s", r.Verdict)
	}
	if r.Unit != "" {
		b.WriteString("; " + r.Unit)
	}
	b.WriteString("\n")
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}
