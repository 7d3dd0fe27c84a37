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
	var b strings.Builder
	WriteRemovals(&b, r.DryRun, "kube-proxy object(s) from "+string(r.Backend), r.Removals)
	return b.String()
}

// WriteRemovals is every cleanup's listing of what went (with dryRun, what
// would go): one line counting the items as what, then one line per item,
// so --backend, --kubelet-hints and --ipvs-leftovers read alike.
func WriteRemovals(b *strings.Builder, dryRun bool, what string, items []string) {
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(b, "cleanup: %s %d %s:\n", verb, len(items), what)
	for _, item := range items {
		fmt.Fprintf(b, "  %s\n", item)
	}
}
