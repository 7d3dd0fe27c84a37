package switchover

import (
	"context"
	"fmt"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// HoldNode takes the node lock (apply's, the switch's) for a short command
// that changes what apply and a switch rely on: cleanup removes rules from
// a backend the plan says kube-proxy has left, adopt records the plan.
// Unlocked, a cleanup that read the plan just before a switch's (or an
// RKE2 start's) apply wrote a new one removed the rules kube-proxy was
// writing there, and adopt's plan overwrote apply's. It waits for an apply
// (a second at most), not for a switch; and since a switch lets go of the
// lock for its RKE2 restarts, it refuses while a switch journal is there,
// naming the switch, or the command that finishes it. role names the taker
// in the lock file and the messages; log gets the lock's waits.
func HoldNode(ctx context.Context, root hostfs.Root, kind distro.Kind, role string, log func(format string, args ...any)) (release func(), err error) {
	release, err = apply.Lock(ctx, apply.Locking{
		Root: root, Role: role, DropInPath: dropInPathFor(root, kind), Wait: lockWait,
		WaitFor: func(holder string) bool { return holder != "switch" }, Log: log,
	})
	if err != nil {
		return nil, err
	}
	j, err := switchjournal.File{Root: root}.Read()
	switch {
	case err != nil:
		err = fmt.Errorf("%w: this %s changed nothing", err, role)
	case j != nil && j.Owner.Alive():
		err = fmt.Errorf("a switch (pid %d) is moving kube-proxy from %s to %s (%s, step %s, %s): this %s changed nothing; run it again once the switch is done",
			j.Owner.PID, j.From, j.To, j.Phase, j.Step, hostfs.SwitchJournal, role)
	case j != nil:
		err = fmt.Errorf("%s: this %s changed nothing", unfinished(j), role)
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// dropInPathFor is the RKE2 (or k3s) drop-in whose directory apply locks
// when /run cannot hold the lock file: every taker must lock the same one.
func dropInPathFor(root hostfs.Root, kind distro.Kind) string {
	layout, _ := facts.RKE2Layout(root, kind)
	return dropInPathOf(layout)
}

// dropInPathOf is dropInPathFor from the units and config already read:
// the whole probe (kernel, modules, hardware) says nothing more about it.
// The distribution's config variable moves it as it moves apply's.
func dropInPathOf(layout facts.RKE2) string {
	p := layout.Distribution.Profile()
	main := os.Getenv(p.ConfigEnv)
	if main == "" {
		main = layout.ConfigFile
	}
	if main == "" {
		main = p.ConfigFile
	}
	return rke2.DropInPath(main)
}
