// Package apply is the ExecStartPre step of rke2-server / rke2-agent: it
// makes the host ready for the decided backend (modules) and tells RKE2 about
// it (the config drop-in), then records the plan for verify. It writes only
// files it owns, atomically, and changes nothing when nothing changed.
package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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
	// Distribution is the node's (distro.K3s: the drop-in has k3s's keys
	// and the bin/aux links are kept in step; "" is RKE2).
	Distribution distro.Kind
}

// Input is the probe, the operator config and the decision to carry out.
type Input struct {
	Facts    facts.Facts
	Config   config.Config
	Decision decide.Decision
	// Problems found before Run (the planned backend was refused): Run then
	// loads and writes nothing but the plan, and removes our drop-in.
	Problems []string
	// Warnings were logged before Run (kube-proxy arguments in RKE2's config
	// that the Kubernetes version refuses); Run records them in the plan.
	Warnings []string
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
func Run(ctx context.Context, o Options, in Input) (Result, error) {
	d := in.Decision
	res := Result{Plan: plan.Plan{Decision: d}, Problems: append([]string{}, in.Problems...)}
	if k := in.Facts.RKE2.Kubernetes; k.Known() {
		res.Plan.Kubernetes = k.String()
	}
	dropInPath := rke2.DropInPath(o.RKE2Config)
	if o.DryRun {
		return res, dryRun(o, in, &res, dropInPath)
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
		res.RKE2Reads = ReadsOperators
		res.Plan.Warnings = append(res.Plan.Warnings, res.Problems...)
		writePlan(o, &res)
		return res, nil
	}

	state, err := kmod.ReadState(o.Root, in.Facts.Kernel.Release)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	if len(res.Problems) > 0 {
		giveUp(o, &res, dropInPath)
		return res, nil
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
		giveUp(o, &res, dropInPath)
		return res, nil
	}
	data, why, err := renderFor(o, in.Facts, d)
	if o.Distribution == distro.K3s {
		reasons := k3sStep(o, in.Facts, d, why)
		res.Plan.Decision.Reasons = append(append([]string{}, d.Reasons...), reasons...)
		o.log("k3s: %s", strings.Join(reasons, " "))
	}
	if err == nil {
		err = writeDropIn(o, dropInPath, data)
	}
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
		giveUp(o, &res, dropInPath)
		return res, nil
	}
	res.Plan.DropIn = dropInPath
	res.Plan.Warnings = append(res.Plan.Warnings, laterOverrides(o, d, o.log)...)
	if !writePlan(o, &res) {
		res.RKE2Reads = ReadsWritten
	}
	return res, nil
}

// giveUp handles a plan that cannot be honoured. RKE2 must not be told to
// run a backend the host cannot run: without our drop-in it starts on its
// own defaults (if on_failure lets it start at all). The plan still records
// what happened, for verify and operators.
func giveUp(o Options, res *Result, dropInPath string) {
	res.RKE2Reads = ReadsDefaults
	if err := remove(o, dropInPath); err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	res.Plan.Warnings = append(res.Plan.Warnings, res.Problems...)
	writePlan(o, res)
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

// writePlan records res.Plan. A failure (full or read-only /run) is a
// problem like any other, for on_failure to weigh: the drop-in is already
// in place, only verify loses its record. It reports whether it wrote.
func writePlan(o Options, res *Result) bool {
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

// operatorsFile returns why the file at the drop-in path is not ours ("" when
// it is ours or absent). We own only a regular file that starts with our
// header; anything else there (a file the operator wrote, a symlink, a
// directory) is left exactly as it is.
func operatorsFile(o Options, hostPath string) string {
	p, fi, err := lstat(o, hostPath)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "" // nothing there; writing will say what is wrong with the directory
	}
	if err != nil {
		return fmt.Sprintf("cannot tell who owns %s: %v; it is left as it is", o.Root.Path(hostPath), err)
	}
	if fi.Mode().IsRegular() {
		ours, err := startsWithHeader(p)
		if err != nil {
			return fmt.Sprintf("cannot tell who owns %s: %v; it is left as it is", p, err)
		}
		if ours {
			return ""
		}
	}
	return fmt.Sprintf("%s (%s) was not written by rke2-proxy-backend (no %q header): it is the operator's and is never replaced; "+
		"move it to another name (e.g. 61-local.yaml, using \"+\" keys) so apply can write its own, or set backend: off",
		p, kind(fi), rke2.DropInHeader)
}

func kind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	default:
		return "a special file"
	}
}

// lstat resolves hostPath's directory under the root and lstats the last
// component itself, so a link there is seen as a link.
func lstat(o Options, hostPath string) (string, fs.FileInfo, error) {
	dir, err := o.Root.Resolve(path.Dir(hostPath))
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, path.Base(hostPath))
	fi, err := os.Lstat(p)
	return p, fi, err
}

// startsWithHeader reads only as many bytes as the header has.
func startsWithHeader(p string) (bool, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, len(rke2.DropInHeader))
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return rke2.IsOurs(buf[:n]), nil
}

// remove deletes our drop-in, and only ours (see operatorsFile).
func remove(o Options, hostPath string) error {
	p, _, err := lstat(o, hostPath)
	if err != nil || operatorsFile(o, hostPath) != "" {
		return nil
	}
	o.log("[started]  removing %s", p)
	if err := os.Remove(p); err != nil {
		o.log("[failed]   removing %s: %v", p, err)
		return fmt.Errorf("remove RKE2 drop-in: %w", err)
	}
	o.log("[finished] removing %s", p)
	return nil
}

// laterOverrides warns about drop-ins that would wipe the keys we set.
func laterOverrides(o Options, d decide.Decision, warn func(format string, args ...any)) []string {
	var keys []string
	for key, values := range map[string][]string{
		rke2.KeyKubeProxyArg: d.KubeProxyArgs, rke2.KeyKubeProxyExtraEnv: d.KubeProxyEnv, rke2.KeyNodeLabel: d.NodeLabels, rke2.KeyNodeTaint: d.NodeTaints,
	} {
		// k3s's drop-in has no kube-proxy-extra-env (RenderK3sDropIn):
		// kube-proxy's environment is the unit's there.
		if len(values) > 0 && (o.Distribution.EnvInConfig() || key != rke2.KeyKubeProxyExtraEnv) {
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

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
