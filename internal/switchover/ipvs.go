package switchover

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
)

// ipvsMode is the proxy mode a migration leaves (the plan's and the
// journal's word for it).
const ipvsMode = decide.ProxyModeIPVS

// LiveSweeper is cleanup.SweepAfterIPVS on this network namespace.
type LiveSweeper struct {
	Run cleanup.Runner
}

func (w LiveSweeper) Sweep(ctx context.Context) (cleanup.AfterIPVS, error) {
	run := w.Run
	if run == nil {
		run = cleanup.Exec
	}
	return cleanup.SweepAfterIPVS(ctx, run, false)
}

// sweepIPVS runs the sweep and logs each line it says. Anything of
// kube-proxy's ipvs state left fails the step: a node that still holds
// kube-ipvs0 answers ARP for every Service IP, so the switch is not done.
func (s *Switch) sweepIPVS(ctx context.Context, l *logger) error {
	if s.Sweeper == nil {
		return fmt.Errorf("no ipvs sweeper: the migration off ipvs cannot remove ipvs's leftovers")
	}
	res, err := s.Sweeper.Sweep(ctx)
	for _, line := range strings.Split(strings.TrimRight(res.Text(), "\n"), "\n") {
		if line != "" {
			l.note("  " + strings.TrimPrefix(line, "cleanup: "))
		}
	}
	return err
}

// abandonStep is the rollback's removal of kube-proxy's rules from To. A
// rolled-back migration off ipvs also sweeps ipvs's leftovers: the
// restored node runs iptables mode (the operator removed proxy-mode=ipvs),
// and a kube-ipvs0 left there answers ARP for every Service IP.
func (s *Switch) abandonStep() step {
	st := s.cleanStep(rollbackSteps[3], s.To, "remove "+s.sweptFrom(s.To))
	if !s.FromIPVS {
		return st
	}
	clean := st.run
	st.what += ", then what ipvs mode left"
	st.run = func(ctx context.Context) error {
		if err := clean(ctx); err != nil {
			return err
		}
		return s.sweepIPVS(ctx, &logger{w: s.Log})
	}
	return st
}

// writeTranslation is the migration's report as the switch prints it
// (stdout) and logs it (the journal of the unit that runs it).
func writeTranslation(w io.Writer, from, to backend.Backend, report []Translation) {
	fmt.Fprintf(w, "switch: migrating off ipvs: kube-proxy runs ipvs mode over %s's iptables; after the switch it runs %s mode on %s\n", from, to.ProxyMode(), to)
	if len(report) == 0 {
		fmt.Fprintf(w, "switch: no ipvs-only setting in RKE2's config or kube_proxy.extra_args: nothing to translate\n")
		return
	}
	fmt.Fprintf(w, "switch: ipvs-only settings and what each becomes in %s mode:\n", to.ProxyMode())
	for _, t := range report {
		fmt.Fprintf(w, "  %s\n", t)
	}
}

// translationLines are the report's lines for the journal.
func translationLines(report []Translation) []string {
	out := make([]string, len(report))
	for i, t := range report {
		out[i] = t.String()
	}
	return out
}

// ipvsRollbackNote is what a rolled-back migration adds: the operator
// removed proxy-mode=ipvs before the switch, so the restored node runs
// iptables mode on From, not ipvs.
func (s *Switch) ipvsRollbackNote() string {
	if !s.FromIPVS {
		return ""
	}
	return " (iptables mode, not ipvs: RKE2's config no longer sets proxy-mode=ipvs; put that item back and restart RKE2 to run ipvs again)"
}
