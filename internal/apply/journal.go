package apply

import (
	"fmt"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// MessageID marks apply's decision entries in the journal, so operators can
// find them with `journalctl MESSAGE_ID=1b14b41052e045ea98937833f439b4e5`.
const MessageID = "1b14b41052e045ea98937833f439b4e5"

// Journal sends the outcome as one structured entry when journald is there;
// stderr (which the unit's journal stream captures) has the same in text.
func Journal(p plan.Plan, problems []string) {
	if !journal.Enabled() {
		return
	}
	d := p.Decision
	prio := journal.PriInfo
	msg := fmt.Sprintf("rke2-proxy-backend applied kube-proxy backend %s (source %s)", d.Backend, d.Source)
	switch {
	case d.Disabled:
		msg = "rke2-proxy-backend is disabled (backend: off)"
	case len(problems) > 0:
		prio = journal.PriWarning
		msg = fmt.Sprintf("rke2-proxy-backend could not apply backend %s: %s", d.Backend, strings.Join(problems, "; "))
	}
	fields := DecisionFields(p)
	fields["RKE2_PROXY_BACKEND_DROP_IN"] = p.DropIn
	fields["RKE2_PROXY_BACKEND_MODULES"] = strings.Join(p.ModulesLoaded, " ")
	fields["RKE2_PROXY_BACKEND_MISSING"] = strings.Join(p.ModulesMissing, " ")
	_ = journal.Send(msg, prio, fields)
}

// DecisionFields are the structured fields every decision entry carries
// (apply's and adopt's), under apply's MESSAGE_ID, so one journalctl query
// finds each way a plan came to be.
func DecisionFields(p plan.Plan) map[string]string {
	d := p.Decision
	return map[string]string{
		"MESSAGE_ID":                    MessageID,
		"SYSLOG_IDENTIFIER":             "rke2-proxy-backend",
		"RKE2_PROXY_BACKEND":            string(d.Backend),
		"RKE2_PROXY_BACKEND_SOURCE":     d.Source,
		"RKE2_PROXY_BACKEND_PROXY_MODE": d.ProxyMode,
		"RKE2_PROXY_BACKEND_IPTABLES":   d.IptablesMode,
		"RKE2_PROXY_BACKEND_REASONS":    strings.Join(d.Reasons, "\n"),
		"RKE2_PROXY_BACKEND_KUBERNETES": p.Kubernetes,
	}
}
