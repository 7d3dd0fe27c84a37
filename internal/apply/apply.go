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
	"sort"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
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
	// LockWait bounds the wait for another apply (0: DefaultLockWait).
	LockWait time.Duration
	// Stdout gets the dry run's report; Log gets one line per side effect.
	Stdout io.Writer
	Log    func(format string, args ...any)
	// Distribution is the node's ("" is RKE2): where kube-proxy is
	// embedded (k3s) the drop-in has its keys and the bin/aux links are
	// kept in step.
	Distribution distro.Kind
}

// Input is the probe, the operator config and the decision to carry out.
type Input struct {
	Facts    facts.Facts
	Config   config.Config
	Decision decide.Decision
	// Problems found before Run (no backend may be carried out): Run then
	// loads and writes nothing but the plan, and removes our drop-in.
	Problems []string
	// Warnings were logged before Run (kube-proxy arguments in RKE2's config
	// that the Kubernetes version refuses); Run records them in the plan.
	Warnings []string
	// chooser falls forward when the kernel cannot run the decision once
	// its modules are loaded, and records the plans refused (nil: the
	// missing features are problems).
	chooser *chooser
}

// Result is what a run did. Problems are the ways it could not honour the
// plan or record it, which on_failure turns into a warning or a failure;
// RKE2Reads then says what RKE2 runs kube-proxy with if it starts anyway.
type Result struct {
	Plan      plan.Plan
	Problems  []string
	RKE2Reads string
}

// What RKE2 reads when a run has problems, for on_failure's message.
const (
	ReadsDefaults  = "its own defaults"
	ReadsOperators = "the operator's own drop-in at that path, left as it is"
	ReadsOther     = "the drop-in the other apply leaves"
	ReadsWritten   = "the drop-in this run wrote"
)

// Run carries out in.Decision. Problems with the host or with its own
// writes are in Result.Problems; the error is for the dry run's output.
// The plan it records says what RKE2 was given (plan.Applied), found on
// disk after the writes, never what was only meant.
func Run(ctx context.Context, o Options, in Input) (Result, error) {
	d := in.Decision
	res := Result{Plan: plan.Plan{Decision: d}, Problems: append([]string{}, in.Problems...)}
	if k := in.Facts.RKE2.Kubernetes; k.Known() {
		res.Plan.Kubernetes = k.String()
	}
	dropInPath := rke2.DropInPath(o.RKE2Config)
	if o.DryRun {
		return res, dryRun(ctx, o, in, &res, dropInPath)
	}
	wait := o.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	release, err := lock(ctx, o, dropInPath, wait)
	if err != nil {
		// Touch nothing: the other run owns the drop-in and the plan now.
		o.log("[failed]   locking: %v", err)
		res.Problems = append(res.Problems, err.Error())
		res.RKE2Reads = ReadsOther
		return res, nil
	}
	defer release()
	// Under the lock no other writer is alive: any temp left is a killed run's.
	for _, p := range []string{dropInPath, hostfs.PlanFile} {
		removed, err := o.Root.RemoveStaleTemps(p)
		for _, r := range removed {
			o.log("removed %s left by an interrupted run", r)
		}
		if err != nil {
			o.log("warning: %v", err)
		}
	}
	if d.Disabled {
		if err := remove(o, dropInPath); err != nil {
			res.Problems = append(res.Problems, err.Error())
		}
		res.Plan.Applied, res.RKE2Reads = reads(o, dropInPath, d, "rke2-proxy-backend is off ("+d.Source+")")
		res.Plan.Warnings = append(res.Plan.Warnings, res.Problems...)
		writePlan(o, &res, in.chooser)
		return res, nil
	}
	for _, r := range d.Respected {
		o.log("respecting the operator's %s setting %s: not overriding it", o.Distribution.Name(), r)
	}
	for _, r := range d.Refused {
		o.log("warning: %s", r)
		res.Plan.Warnings = append(res.Plan.Warnings, r)
	}
	res.Plan.Warnings = append(res.Plan.Warnings, in.Warnings...)
	if owner := operatorsFile(o, dropInPath); owner != "" {
		// Checked before anything is loaded: the run changes nothing then.
		res.Problems = append(res.Problems, owner)
		giveUp(o, &res, dropInPath, in.chooser)
		return res, nil
	}

	state, err := kmod.ReadState(o.Root, in.Facts.Kernel.Release)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	if len(res.Problems) > 0 {
		giveUp(o, &res, dropInPath, in.chooser)
		return res, nil
	}
	loaded := map[string]bool{}
	for {
		missing := loadModules(ctx, o, state, in.Facts.Kernel, d, &res, loaded)
		if len(missing) == 0 {
			break
		}
		if in.chooser == nil {
			res.Problems = append(res.Problems, missing...)
			giveUp(o, &res, dropInPath, nil)
			return res, nil
		}
		o.log("[failed]   %s cannot run on this host: %s", d.Backend, strings.Join(missing, "; "))
		next, problems := in.chooser.next(ctx, d, strings.Join(missing, "; "))
		res.Plan.Decision = next
		if len(problems) > 0 {
			res.Problems = append(res.Problems, problems...)
			giveUp(o, &res, dropInPath, in.chooser)
			return res, nil
		}
		d = next
		o.log("backend %s (source %s): %s", d.Backend, d.Source, strings.Join(d.Reasons, " "))
	}
	data, why, err := renderFor(o, in.Facts, d)
	if o.Distribution.Profile().KubeProxyEmbedded {
		reasons := k3sStep(o, in.Facts, d, why)
		res.Plan.Decision.Reasons = append(append([]string{}, d.Reasons...), reasons...)
		o.log("k3s: %s", strings.Join(reasons, " "))
	}
	if err == nil {
		err = writeDropIn(o, dropInPath, data)
	}
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
		giveUp(o, &res, dropInPath, in.chooser)
		return res, nil
	}
	res.Plan.Applied = plan.Wrote(d, dropInPath)
	res.Plan.Warnings = append(res.Plan.Warnings, laterOverrides(o, d, o.log)...)
	res.RKE2Reads = ReadsWritten // what on_failure names should the plan not be written
	writePlan(o, &res, in.chooser)
	return res, nil
}

// loadModules loads d's modules (adding what is present to loaded, which
// the plan records) and returns the kernel features d still lacks.
func loadModules(ctx context.Context, o Options, state kmod.State, k facts.Kernel, d decide.Decision, res *Result, loaded map[string]bool) []string {
	l := kmod.Loader{Root: o.Root, Modprobe: o.Modprobe, Log: o.Log}.Load(ctx, state, d.Modules)
	for _, m := range l.Present() {
		loaded[m] = true
	}
	res.Plan.ModulesLoaded = sortedKeys(loaded)
	res.Plan.ModulesMissing = l.MissingNames()
	if len(l.NotInKernel) > 0 {
		o.log("not in this kernel's module tree (built into another module, or absent; the feature check decides): %s",
			strings.Join(l.NotInKernel, " "))
	}
	if err := l.Err(); err != nil {
		// Module names differ between kernels; only a missing feature
		// means the backend cannot run.
		o.log("warning: %v", err)
		res.Plan.Warnings = append(res.Plan.Warnings, err.Error())
	}
	if l.NoModuleSupport {
		o.log("kernel without loadable modules: every feature is built in or absent, nothing to load")
	}
	return kmod.MissingFeatures(d.Backend, k, l.After(state))
}

// giveUp handles a plan that cannot be honoured. RKE2 must not be told to
// run a backend the host cannot run: our drop-in is removed, and RKE2
// starts on its own defaults (if on_failure lets it start at all). What
// RKE2 reads is then looked up, not assumed: a drop-in this run could not
// remove (a read-only /etc) is still what RKE2 reads, and the plan says
// so, with the backend it names.
func giveUp(o Options, res *Result, dropInPath string, c *chooser) {
	if err := remove(o, dropInPath); err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	res.Plan.Applied, res.RKE2Reads = reads(o, dropInPath, res.Plan.Decision, res.Problems[0])
	res.Plan.Warnings = append(res.Plan.Warnings, res.Problems...)
	writePlan(o, res, c)
}

func dropIn(d decide.Decision) rke2.DropIn {
	return rke2.DropIn{Backend: d.Backend, KubeProxyArgs: d.KubeProxyArgs, KubeProxyEnv: d.KubeProxyEnv, NodeLabels: d.NodeLabels, NodeTaints: d.NodeTaints}
}

func (o Options) log(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

func writeDropIn(o Options, hostPath string, data []byte) error {
	o.log("[started]  writing %s", o.Root.Path(hostPath))
	changed, err := o.Root.WriteFileAtomic(hostPath, data, rke2.DropInMode)
	if err != nil {
		o.log("[failed]   writing %s: %v", o.Root.Path(hostPath), err)
		return fmt.Errorf("write RKE2 drop-in: %w", err)
	}
	o.log("[finished] writing %s (%s)", o.Root.Path(hostPath), changedWord(changed))
	return nil
}

// writePlan records res.Plan, with what c kept of the search for a
// backend. A failure (full or read-only /run) is a problem like any other,
// for on_failure to weigh: the drop-in is already in place, only verify
// loses its record. It reports whether it wrote.
func writePlan(o Options, res *Result, c *chooser) bool {
	if c != nil {
		c.record(&res.Plan)
	}
	o.log("[started]  writing %s", o.Root.Path(hostfs.PlanFile))
	changed, err := plan.Write(o.Root, res.Plan)
	if err != nil {
		o.log("[failed]   writing %s: %v", o.Root.Path(hostfs.PlanFile), err)
		res.Problems = append(res.Problems, fmt.Sprintf("%v; verify cannot tell what was planned until apply runs again", err))
		return false
	}
	o.log("[finished] writing %s (%s)", o.Root.Path(hostfs.PlanFile), changedWord(changed))
	return true
}

func changedWord(changed bool) string {
	if changed {
		return "changed"
	}
	return "unchanged"
}

// operatorsFile returns why the file at the drop-in path is not ours ("" when it
// is ours or absent). We own only a regular file that starts with our
// header; anything else there (a file the operator wrote, a symlink, a
// directory), or a file we cannot tell about, is left exactly as it is.
func operatorsFile(o Options, hostPath string) string {
	at := inspect(o, hostPath)
	switch {
	case at.err != nil:
		return fmt.Sprintf("cannot tell who owns %s: %v; it is left as it is", at.path, at.err)
	case at.absent, at.ours:
		return ""
	}
	return fmt.Sprintf("%s (%s) was not written by rke2-proxy-backend (no %q header): it is the operator's and is never replaced; "+
		"move it to another name (e.g. 61-local.yaml, using \"+\" keys) so apply can write its own, or set backend: off",
		at.path, at.kind, rke2.DropInHeader)
}

// remove deletes our drop-in, and only ours (see operatorsFile). A file
// it cannot tell about is an error: RKE2 may read it.
func remove(o Options, hostPath string) error {
	at := inspect(o, hostPath)
	switch {
	case at.err != nil:
		return fmt.Errorf("remove RKE2 drop-in: cannot tell who owns %s: %w", at.path, at.err)
	case !at.ours:
		return nil // absent, or the operator's
	}
	o.log("[started]  removing %s", at.path)
	if err := os.Remove(at.path); err != nil {
		o.log("[failed]   removing %s: %v", at.path, err)
		return fmt.Errorf("remove RKE2 drop-in: %w", err)
	}
	o.log("[finished] removing %s", at.path)
	return nil
}

// laterOverrides warns about drop-ins that would wipe the keys we set.
func laterOverrides(o Options, d decide.Decision, warn func(format string, args ...any)) []string {
	var keys []string
	for key, values := range map[string][]string{
		rke2.KeyKubeProxyArg: d.KubeProxyArgs, rke2.KeyKubeProxyExtraEnv: d.KubeProxyEnv, rke2.KeyNodeLabel: d.NodeLabels, rke2.KeyNodeTaint: d.NodeTaints,
	} {
		// k3s's drop-in has no kube-proxy-extra-env (dropin.RenderK3s):
		// kube-proxy's environment is the unit's there.
		if len(values) > 0 && (!o.Distribution.Profile().KubeProxyEmbedded || key != rke2.KeyKubeProxyExtraEnv) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	files, err := rke2.ReadFilesOf(o.Root, o.RKE2Config, o.Distribution.Name())
	if err != nil {
		msg := fmt.Sprintf("could not check later %s drop-ins: %v", o.Distribution.Name(), err)
		warn("warning: %s", msg)
		return []string{msg}
	}
	ws := rke2.LaterOverrides(files, o.RKE2Config, o.Distribution.Name(), keys)
	for _, w := range ws {
		warn("warning: %s", w)
	}
	return ws
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
