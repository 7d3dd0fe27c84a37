package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// dryRun prints what a real run would do: the modules it would load, the
// drop-in it would write, and the problems and warnings a real run would
// report. It writes and loads nothing; a backend whose features would be
// missing after the load falls forward as in a real run.
func dryRun(ctx context.Context, o Options, in Input, res *Result, dropInPath string) error {
	d := in.Decision
	w := o.Stdout
	if d.Disabled {
		fmt.Fprintf(w, "# disabled: would remove %s if present and ours\n", dropInPath)
		return nil
	}
	if owner := operatorsFile(o, dropInPath); owner != "" {
		res.Problems = append(res.Problems, owner)
		res.RKE2Reads = ReadsOperators
	}
	state, err := kmod.ReadState(o.Root, in.Facts.Kernel.Release)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	// after is the module state a real run would leave: what is present,
	// plus what the module tree has (all of it when that is unknown).
	after := kmod.State{Supported: state.Supported, Loaded: map[string]bool{}, Builtin: state.Builtin}
	for m := range state.Loaded {
		after.Loaded[m] = true
	}
	for {
		var load, unavailable []string
		for _, m := range d.Modules {
			n := kmod.Normalize(m)
			switch {
			case after.Present(m):
			case state.AvailableKnown && !state.Available[n]:
				unavailable = append(unavailable, m)
			default:
				load = append(load, m)
				after.Loaded[n] = true
			}
		}
		fmt.Fprintf(w, "# backend: %s (source %s)\n", d.Backend, d.Source)
		if d.ProxyMode == decide.ProxyModeIPVS {
			fmt.Fprintf(w, "# proxy mode: ipvs, kept from %s's config (the drop-in writes no proxy-mode), scheduler %s\n", o.Distribution.Name(), d.IPVSScheduler)
		}
		switch {
		case !state.Supported:
			fmt.Fprintln(w, "# modules: kernel has no loadable modules, nothing to load")
		case len(load) == 0:
			fmt.Fprintln(w, "# modules: all present, nothing to load")
		default:
			fmt.Fprintf(w, "# modules to load: %s\n", strings.Join(load, " "))
		}
		if len(unavailable) > 0 {
			fmt.Fprintf(w, "# not in this kernel's module tree: %s\n", strings.Join(unavailable, " "))
		}
		missing := kmod.MissingFeatures(d.Backend, in.Facts.Kernel, after)
		for _, m := range missing {
			fmt.Fprintf(w, "# cannot run: %s\n", m)
		}
		if len(missing) == 0 {
			break
		}
		if in.chooser == nil || len(res.Problems) > 0 {
			res.Problems = append(res.Problems, missing...)
			break
		}
		next, problems := in.chooser.next(ctx, d, strings.Join(missing, "; "))
		res.Problems = append(res.Problems, problems...)
		d, res.Plan.Decision = next, next
		if len(problems) > 0 {
			break
		}
	}
	if len(res.Problems) > 0 {
		if res.RKE2Reads == "" {
			res.RKE2Reads = ReadsDefaults
		}
		for _, p := range res.Problems {
			fmt.Fprintf(w, "# problem: %s\n", p)
		}
		fmt.Fprintf(w, "# would not write %s (on_failure decides whether %s starts)\n", dropInPath, o.Distribution.Name())
		return nil
	}
	res.Plan.Applied = plan.Wrote(d, dropInPath)
	data, why, err := renderFor(o, in.Facts, d)
	if why != "" {
		fmt.Fprintf(w, "# k3s: %s\n", why)
	}
	if err != nil {
		return fmt.Errorf("render RKE2 drop-in: %w", err)
	}
	// The same check a real run makes after writing, so the dry run warns
	// about a later drop-in that would wipe ours just as apply would.
	laterOverrides(o, d, func(format string, args ...any) { fmt.Fprintf(w, "# "+format+"\n", args...) })
	fmt.Fprintf(w, "# would write %s (mode %04o):\n", dropInPath, rke2.DropInMode)
	_, err = w.Write(data)
	return err
}
