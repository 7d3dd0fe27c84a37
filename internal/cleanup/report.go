package cleanup

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
)

// Result is what `cleanup --backend B` prints: the plan, and whether it
// was only a dry run, as JSON or as Text.
type Result struct {
	*Plan
	DryRun bool `json:"dry_run"`
	// Verify is verify's verdict after rules went.
	Verify *Reverified `json:"verify,omitempty"`
}

// Text is one line saying what went (or would go) and whose, then one per
// object. RKE2's lines name kube-proxy alone, as they always did.
func (r Result) Text() string {
	if r.Empty() {
		return fmt.Sprintf("cleanup: no %s rules in %s; nothing to remove\n", OwnerNames(r.group, "or"), r.Backend)
	}
	what := "kube-proxy object(s) from " + string(r.Backend)
	if len(r.Owners) > 0 && !slices.Equal(r.Owners, []ownership.Owner(ownership.KubeProxyOnly)) {
		what = "object(s) of " + OwnerNames(r.Owners, "and") + " from " + string(r.Backend)
	}
	var b strings.Builder
	WriteRemovals(&b, r.DryRun, what, r.Removals)
	b.WriteString(r.Verify.Text())
	return b.String()
}

// OwnerNames lists owners for a sentence, joined by conj: "kube-proxy",
// "kube-proxy, flannel and kube-router"; none (a Plan made by hand) is
// kube-proxy.
func OwnerNames(owners []ownership.Owner, conj string) string {
	if len(owners) == 0 {
		return string(ownership.KubeProxy)
	}
	s := make([]string, len(owners))
	for i, o := range owners {
		s[i] = string(o)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + conj + " " + s[len(s)-1]
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
