package decide

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// ForcedBy is where a forced backend came from, as the decision's config
// file names it in refusals and reasons.
const ForcedBy = "the generator's plan (apply --backend)"

// Force decides again with b as the operator's own pin: apply --backend
// carries out the backend the generator planned at boot even when a fresh
// decision (fresh) would pick another. If the host cannot run b, Decide
// refuses it and picks another; the refusal comes back as a problem for
// on_failure, so apply never silently applies something else.
func Force(f facts.Facts, c config.Config, fresh Decision, b backend.Backend) (Decision, []string) {
	c.Backend, c.BackendSource, c.File = string(b), config.SourceConfig, ForcedBy
	d := Decide(f, c)
	d.Reasons = append([]string{fmt.Sprintf("A fresh decision would pick %s; apply keeps the backend planned at boot.", fresh.Backend)}, d.Reasons...)
	if d.Backend == b {
		return d, nil
	}
	why := strings.Join(d.Refused, "; ")
	if why == "" {
		why = strings.Join(d.Reasons, " ")
	}
	return d, []string{fmt.Sprintf("the planned backend %s cannot run on this host: %s", b, why)}
}
