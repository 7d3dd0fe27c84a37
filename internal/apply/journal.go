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
	msg, prio, fields := journalEntry(p, problems)
	_ = journal.Send(msg, prio, fields)
}

// journalEntry words the entry after what RKE2 was given (p.Applied), not
// after what was meant: a plan refused on the way is named as refused.
func journalEntry(p plan.Plan, problems []string) (string, journal.Priority, map[string]string) {
	d, a := p.Decision, p.Applied
	prio := journal.PriInfo
	var msg string
	switch {
	case d.Disabled && a.Backend == "":
		msg = "rke2-proxy-backend is disabled (backend: off)"
	case a.Backend == "" && a.Nothing != "":
		prio = journal.PriWarning
		msg = "rke2-proxy-backend gave RKE2 no backend: " + a.Nothing
	case a.Backend == "":
		// nothing recorded: another apply holds the lock
		prio = journal.PriWarning
		msg = fmt.Sprintf("rke2-proxy-backend could not apply backend %s", d.Backend)
	case a.By == plan.ByEarlierRun:
		prio = journal.PriWarning
		msg = fmt.Sprintf("rke2-proxy-backend could not apply backend %s; RKE2 reads the drop-in an earlier run left, which names %s", d.Backend, a.Backend)
	default:
		msg = fmt.Sprintf("rke2-proxy-backend applied kube-proxy backend %s (source %s)", a.Backend, d.Source)
		if p.FellForward != "" {
			msg += ", falling forward: " + p.FellForward
		}
	}
	if len(problems) > 0 {
		prio = journal.PriWarning
		msg += ": " + strings.Join(problems, "; ")
	}
	for _, r := range p.Refused {
		if r.Explicit && a.Backend != "" && a.Backend != r.Backend {
			prio = journal.PriWarning
			msg += fmt.Sprintf("; the operator's %s was refused: %s", orName(r.Backend), r.Why)
		}
	}
	fields := DecisionFields(p)
	fields["RKE2_PROXY_BACKEND_APPLIED"] = string(a.Backend)
	fields["RKE2_PROXY_BACKEND_DROP_IN"] = a.DropIn
	fields["RKE2_PROXY_BACKEND_MODULES"] = strings.Join(p.ModulesLoaded, " ")
	fields["RKE2_PROXY_BACKEND_MISSING"] = strings.Join(p.ModulesMissing, " ")
	var refused []string
	for _, r := range p.Refused {
		refused = append(refused, fmt.Sprintf("%s (%s): %s", orName(r.Backend), r.Plan, r.Why))
	}
	fields["RKE2_PROXY_BACKEND_REFUSED"] = strings.Join(refused, "\n")
	fields["RKE2_PROXY_BACKEND_FELL_FORWARD"] = p.FellForward
	return msg, prio, fields
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
