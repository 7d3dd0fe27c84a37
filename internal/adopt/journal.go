package adopt

import (
	"fmt"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
)

// Journal sends the adopted plan as apply's structured decision entry (the
// same MESSAGE_ID and fields, source "adopted"), so what operators query
// after every RKE2 start also finds an adoption; differences from what the
// generator would choose raise it to a warning and are in the message.
// Run from a package's postinst, adopt's stdout reaches the installer's
// terminal only: this entry is what the journal keeps.
func Journal(res Result) {
	if !journal.Enabled() || res.Plan == nil {
		return
	}
	d := res.Plan.Decision
	prio := journal.PriInfo
	msg := fmt.Sprintf("rke2-proxy-backend adopted kube-proxy backend %s as it runs, without restarting %s", d.Backend, res.Unit)
	if len(res.Differences) > 0 {
		prio = journal.PriWarning
		msg += ": " + strings.Join(res.Differences, " ")
	}
	fields := apply.DecisionFields(*res.Plan)
	fields["RKE2_PROXY_BACKEND_WARNINGS"] = strings.Join(res.Plan.Warnings, "\n")
	_ = journal.Send(msg, prio, fields)
}
