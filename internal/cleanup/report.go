package cleanup

import (
	"fmt"
	"strings"
)

// Result is what `cleanup --backend B` prints: the plan, and whether it
// was only a dry run, as JSON or as Text.
type Result struct {
	*Plan
	DryRun bool `json:"dry_run"`
}

// Text is one line saying what went (or would go), then one per object.
func (r Result) Text() string {
	if r.Empty() {
		return fmt.Sprintf("cleanup: no kube-proxy rules in %s; nothing to remove\n", r.Backend)
	}
	verb := "removed"
	if r.DryRun {
		verb = "would remove"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cleanup: %s %d kube-proxy object(s) from %s:\n", verb, len(r.Removals), r.Backend)
	for _, line := range r.Removals {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	return b.String()
}
