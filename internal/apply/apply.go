// Package apply is the ExecStartPre step of rke2-server / rke2-agent: it
// makes the host ready for the decided backend (modules) and tells RKE2 about
// it (the config drop-in), then records the plan for verify. It writes only
// files it owns, atomically, and changes nothing when nothing changed.
package apply

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Options are one apply run's settings.
type Options struct {
	Root hostfs.Root
	// RKE2Config is RKE2's main config file (RKE2_CONFIG_FILE, else the
	// probed one, else RKE2's default).
	RKE2Config string
	DryRun     bool
	// Modprobe overrides hostfs.Modprobe.
	Modprobe string
	// Stdout gets the dry run's report; Log gets one line per side effect.
	Stdout io.Writer
	Log    func(format string, args ...any)
}

// Input is the probe, the operator config and the decision to carry out.
type Input struct {
	Facts    facts.Facts
	Config   config.Config
	Decision decide.Decision
	// Problems found before Run (the planned backend was refused): Run then
	// loads and writes nothing but the plan, and removes our drop-in.
	Problems []string
}

// Result is what a run did; Problems are the ways it could not honour the
// plan, which on_failure turns into a warning or a failure.
type Result struct {
	Plan     plan.Plan
	Problems []string
}

// Run carries out in.Decision. It returns an error only for failures of its
// own bookkeeping (the plan file); problems with the host are in Problems.
func Run(ctx context.Context, o Options, in Input) (Result, error) {
	d := in.Decision
	res := Result{Plan: plan.Plan{Decision: d}, Problems: append([]string{}, in.Problems...)}
	if k := in.Facts.RKE2.Kubernetes; k.Known() {
		res.Plan.Kubernetes = k.String()
	}
	dropInPath := rke2.DropInPath(o.RKE2Config)
	if d.Disabled {
		return res, disable(o, dropInPath)
	}
	for _, r := range d.Respected {
		o.log("respecting the operator's RKE2 setting %s: not overriding it", r)
	}
	for _, r := range d.Refused {
		o.log("warning: %s", r)
		res.Plan.Warnings = append(res.Plan.Warnings, r)
	}

	state, err := kmod.ReadState(o.Root, in.Facts.Kernel.Release)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	if o.DryRun {
		for _, p := range res.Problems {
			fmt.Fprintf(o.Stdout, "# problem: %s\n", p)
		}
		return res, dryRun(o, in, state, dropInPath)
	}
	if len(res.Problems) > 0 {
		return res, giveUp(o, &res, dropInPath)
	}
	loaded := kmod.Loader{Root: o.Root, Modprobe: o.Modprobe, Log: o.Log}.Load(ctx, state, d.Modules)
	res.Plan.ModulesLoaded = sorted(loaded.Present())
	res.Plan.ModulesMissing = loaded.MissingNames()
	if len(loaded.NotInKernel) > 0 {
		o.log("not in this kernel's module tree (built into another module, or absent; the feature check decides): %s",
			strings.Join(loaded.NotInKernel, " "))
	}
	if err := loaded.Err(); err != nil {
		// Module names differ between kernels; only a missing feature
		// (below) means the backend cannot run.
		o.log("warning: %v", err)
		res.Plan.Warnings = append(res.Plan.Warnings, err.Error())
	}
	if loaded.NoModuleSupport {
		o.log("kernel without loadable modules: every feature is built in or absent, nothing to load")
	}
	res.Problems = append(res.Problems, kmod.MissingFeatures(d.Backend, in.Facts.Kernel, state)...)

	if len(res.Problems) > 0 {
		return res, giveUp(o, &res, dropInPath)
	}
	data, err := rke2.RenderDropIn(dropIn(d))
	if err == nil {
		err = writeDropIn(o, dropInPath, data)
	}
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
		return res, giveUp(o, &res, dropInPath)
	}
	res.Plan.DropIn = dropInPath
	res.Plan.Warnings = append(res.Plan.Warnings, laterOverrides(o, d)...)
	return res, writePlan(o, res.Plan)
}

// giveUp handles a plan that cannot be honoured. RKE2 must not be told to
// run a backend the host cannot run: without our drop-in it starts on its
// own defaults (if on_failure lets it start at all). The plan still records
// what happened, for verify and operators.
func giveUp(o Options, res *Result, dropInPath string) error {
	if err := remove(o, dropInPath); err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	res.Plan.Warnings = append(res.Plan.Warnings, res.Problems...)
	return writePlan(o, res.Plan)
}

func dropIn(d decide.Decision) rke2.DropIn {
	return rke2.DropIn{Backend: d.Backend, KubeProxyArgs: d.KubeProxyArgs, KubeProxyEnv: d.KubeProxyEnv, NodeLabels: d.NodeLabels}
}

func (o Options) log(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

func writeDropIn(o Options, hostPath string, data []byte) error {
	removeStaleTemps(o, hostPath)
	o.log("[started]  writing %s", o.Root.Path(hostPath))
	changed, err := o.Root.WriteFileAtomic(hostPath, data, rke2.DropInMode)
	if err != nil {
		o.log("[failed]   writing %s: %v", o.Root.Path(hostPath), err)
		return fmt.Errorf("write RKE2 drop-in: %w", err)
	}
	o.log("[finished] writing %s (%s)", o.Root.Path(hostPath), changedWord(changed))
	return nil
}

func writePlan(o Options, p plan.Plan) error {
	o.log("[started]  writing %s", o.Root.Path(hostfs.PlanFile))
	changed, err := plan.Write(o.Root, p)
	if err != nil {
		o.log("[failed]   writing %s: %v", o.Root.Path(hostfs.PlanFile), err)
		return err
	}
	o.log("[finished] writing %s (%s)", o.Root.Path(hostfs.PlanFile), changedWord(changed))
	return nil
}

func changedWord(changed bool) string {
	if changed {
		return "changed"
	}
	return "unchanged"
}

// remove deletes our drop-in, and only ours: the file must carry our header.
func remove(o Options, hostPath string) error {
	data, err := o.Root.ReadFile(hostPath)
	if err != nil || !strings.HasPrefix(string(data), "# Generated by rke2-proxy-backend") {
		return nil
	}
	p, err := o.Root.Resolve(hostPath)
	if err != nil {
		return err
	}
	o.log("[started]  removing %s", p)
	if err := os.Remove(p); err != nil {
		o.log("[failed]   removing %s: %v", p, err)
		return fmt.Errorf("remove RKE2 drop-in: %w", err)
	}
	o.log("[finished] removing %s", p)
	return nil
}

// disable removes a drop-in left from before the operator turned us off,
// so RKE2 goes back to its own defaults.
func disable(o Options, hostPath string) error {
	if o.DryRun {
		fmt.Fprintf(o.Stdout, "# disabled: would remove %s if present\n", hostPath)
		return nil
	}
	return remove(o, hostPath)
}

// removeStaleTemps deletes temp files a killed earlier run left next to the
// drop-in (RKE2 ignores them, their names do not end in .yaml, but they
// would pile up).
func removeStaleTemps(o Options, hostPath string) {
	entries, err := o.Root.ReadDir(path.Dir(hostPath))
	if err != nil {
		return
	}
	prefix := "." + path.Base(hostPath) + ".tmp-"
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			p, err := o.Root.Resolve(path.Join(path.Dir(hostPath), e.Name()))
			if err == nil && os.Remove(p) == nil {
				o.log("removed %s left by an interrupted run", p)
			}
		}
	}
}

// laterOverrides warns about drop-ins that would wipe the keys we set.
func laterOverrides(o Options, d decide.Decision) []string {
	var keys []string
	for key, values := range map[string][]string{
		rke2.KeyKubeProxyArg: d.KubeProxyArgs, rke2.KeyKubeProxyExtraEnv: d.KubeProxyEnv, rke2.KeyNodeLabel: d.NodeLabels,
	} {
		if len(values) > 0 {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	files, err := rke2.ReadFiles(o.Root, o.RKE2Config)
	if err != nil {
		msg := fmt.Sprintf("could not check later RKE2 drop-ins: %v", err)
		o.log("warning: %s", msg)
		return []string{msg}
	}
	ws := rke2.LaterOverrides(files, o.RKE2Config, keys)
	for _, w := range ws {
		o.log("warning: %s", w)
	}
	return ws
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
