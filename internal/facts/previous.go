package facts

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// previousPlan reads the backend this boot's earlier apply gave RKE2
// (plan.Applied), never one it only meant: a plan whose backend could not
// be applied (the kernel refused it, a read-only /etc) must not keep the
// node on it. No plan is the normal first-boot case and not reported; /run
// is tmpfs, so a plan there always belongs to the running boot.
func (p *probe) previousPlan() string {
	data, ok := p.read(hostfs.PlanFile, "the backend applied earlier in this boot is unknown")
	if !ok {
		return ""
	}
	doc, err := plan.Parse(data)
	if err != nil {
		err = jsonProblem(err)
		p.unreadable("%s: %s: the backend applied earlier in this boot is unknown; remove the file, apply writes it again", hostfs.PlanFile, err)
		return ""
	}
	applied := doc.AppliedBackend()
	if applied == "" {
		return "" // nothing was applied: off, or the plan could not be carried out
	}
	if _, err := backend.Parse(string(applied)); err != nil {
		p.unreadable("%s: applied.backend: %s; remove the file, apply writes it again", hostfs.PlanFile, err)
		return ""
	}
	return string(applied)
}

// jsonProblem words a JSON error by position only: encoding/json's syntax
// errors quote the offending character, and the file may not be ours.
func jsonProblem(err error) error {
	var schema *plan.SchemaError
	if errors.As(err, &schema) {
		return err // says the value and what to do; no byte of the file quoted
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("not valid JSON at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("not the plan's JSON: %s has the wrong type", typ.Field)
	}
	return errors.New("not valid JSON")
}
