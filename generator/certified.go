package generator

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// certifiedNotice logs, at the machine's first boot, where it differs from
// what its image was certified for (certify --root IMAGE): after that
// boot the difference is this machine's own state, which detect still
// shows. systemd before 251 does not say whether the boot is the first
// (no SYSTEMD_FIRST_BOOT): the line is then logged at every boot rather
// than never.
func certifiedNotice(o Options, p hostplan.Plan) {
	if p.Certified == nil || p.Certified.Notice == "" {
		return
	}
	for _, kv := range o.Environ {
		if v, ok := strings.CutPrefix(kv, "SYSTEMD_FIRST_BOOT="); ok && v == "0" {
			return
		}
	}
	o.Log.Warn("%s", p.Certified.Notice)
}
