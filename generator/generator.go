// Package generator is rke2-proxy-backend's systemd generator mode
// (systemd.generator(7)). At every boot and daemon-reload, before any unit
// starts, it probes the host read-only, decides the backend and writes a
// drop-in for each installed RKE2 unit into the normal generator directory.
// It never fails the boot. A broken operator config still gets apply wired
// into RKE2's units: apply then exits 2 naming the file, key and value, and
// RKE2 does not start (the intent is unknown, and the drop-in an earlier
// boot left must not be used silently). On any other problem it logs one
// line saying what RKE2 will start with, and writes nothing.
package generator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// Decider probes the host and decides; the generator calls it only once it
// knows there is work to do. Its error is the operator config's, with the
// facts still in the plan.
type Decider func() (hostplan.Plan, error)

// Options are one generator run's inputs.
type Options struct {
	Root hostfs.Root
	// Dirs are the normal, early and late output directories (at least
	// the normal one). Only the normal one is written.
	Dirs []string
	// ConfigFile is the operator config file ("" is hostfs.ConfigFile);
	// any other is passed on to apply and verify too.
	ConfigFile string
	// Environ is the generator's environment (as os.Environ): the config's
	// variables, and SYSTEMD_IN_INITRD.
	Environ []string
	// Binary is the installed tool the drop-ins run ("" means
	// hostfs.Binary); see units.Input.Binary.
	Binary string
	// Decide replaces the host's own probe and decision (tests); nil is
	// hostplan.Load with the boot probe.
	Decide Decider
	// Distribution overrides finding it on Root ("": find it).
	Distribution distro.Kind
	Log          *Logger
}

// Outcome says what a run did.
type Outcome string

const (
	Wrote    Outcome = "wrote"
	Initrd   Outcome = "initrd"
	Disabled Outcome = "disabled"
	NoRKE2   Outcome = "no-rke2"
	// BrokenConfig: the operator config is broken; apply is wired in and
	// will stop RKE2's start until it is fixed.
	BrokenConfig Outcome = "broken-config"
	Failed       Outcome = "failed"
)

// Run does one generator run and logs what it did. The error (with Failed)
// is for tests; callers exit 0 regardless, as systemd.generator(7) asks.
func Run(o Options) (Outcome, error) {
	if inInitrd(o.Root, o.Environ) {
		o.Log.Info("running in the initrd; RKE2 starts from the real root, nothing to do")
		return Initrd, nil
	}
	out, kind, err := run(o)
	if err != nil && out != BrokenConfig {
		name := kind.Name()
		o.Log.Error("%v; wrote nothing, so %s starts without apply: with the %s an earlier boot left, if any (delete it for %s's own defaults)",
			err, name, rke2.DropInName, name)
		return Failed, err
	}
	return out, err
}

// run is Run after the initrd check; it also returns the distribution it
// found ("" before that), so Run's last words name it.
func run(o Options) (Outcome, distro.Kind, error) {
	if len(o.Dirs) == 0 || o.Dirs[0] == "" {
		return Failed, "", errors.New("no output directory given")
	}
	normal := o.Dirs[0]
	if !filepath.IsAbs(normal) {
		return Failed, "", fmt.Errorf("output directory %q is not an absolute path", normal)
	}
	dist := distro.Find(o.Root, o.Distribution)
	if o.Decide == nil && !dist.Installed() {
		// Before the probe: a host without RKE2 or k3s (most hosts that
		// have the package but not yet the cluster) pays for a few stats,
		// not for /proc/config.gz, PCI and every bus's drivers, nor for
		// entering runFor, whose frame would grow the stack.
		o.Log.Info("%s; nothing to do", noUnits(dist.Kind))
		return NoRKE2, dist.Kind, nil
	}
	out, err := runFor(o, normal, dist)
	return out, dist.Kind, err
}

func runFor(o Options, normal string, dist distro.Distro) (Outcome, error) {
	if dist.Note != "" {
		o.Log.Warn("%s", dist.Note)
	}
	p, err := o.decide(dist)
	f, cfg, d := p.Facts, p.Config, p.Decision
	if err != nil {
		return brokenConfig(o, normal, f, dist, err)
	}
	for _, p := range f.Unreadable {
		o.Log.Warn("%s", p)
	}
	certifiedNotice(o, p)
	if d.Disabled {
		// backend: off, or RKE2 itself runs no kube-proxy we manage.
		o.Log.Info("disabled (source %s): %s", d.Source, strings.Join(d.Reasons, " "))
		return Disabled, nil
	}
	names := unitNames(dist, rke2UnitNames(f))
	if len(names) == 0 {
		o.Log.Info("%s; nothing to do", noUnits(dist.Kind))
		return NoRKE2, nil
	}
	files, err := units.Generate(units.Input{
		Backend:     d.Backend,
		Units:       names,
		VerifyWait:  time.Duration(cfg.Verify.Wait),
		ConfigFile:  o.passedConfig(),
		Binary:      o.Binary,
		WatchPartOf: enabledRKE2Unit(o.Root, names),
	})
	if err != nil {
		return Failed, fmt.Errorf("render drop-ins: %w", err)
	}
	if dist.Kind.Profile().KubeProxyEmbedded {
		if files, err = k3sEnvironment(files, names, d.IptablesMode); err != nil {
			return Failed, err
		}
	}
	if err := writeAll(normal, files); err != nil {
		return Failed, err
	}
	for _, r := range d.Refused {
		o.Log.Warn("%s", refusal(r, p, dist.Kind))
	}
	o.Log.Info("kube-proxy backend %s (source %s) for %s: %s",
		d.Backend, d.Source, strings.Join(names, ", "), strings.Join(d.Reasons, " "))
	return Wrote, nil
}

// refusal is the line for an operator's setting the decision refused
// (CONTRACT point 2): what and why (the module the kernel lacks), the
// backend that would work, and what on_failure makes apply do about it
// before RKE2 starts. The boot goes on either way: apply is wired in.
func refusal(refused string, p hostplan.Plan, k distro.Kind) string {
	d, name := p.Decision, k.Name()
	if !decide.CanRun(p.Facts, d.Backend) {
		return fmt.Sprintf("refused %s; no backend can run on this host as far as the facts show, and apply decides before %s starts (on_failure: %s)", refused, name, p.Config.OnFailure)
	}
	if p.Config.OnFailure == config.OnFailureBlock {
		return fmt.Sprintf("refused %s; %s would work: with on_failure: block, apply keeps %s from starting until the setting is changed (set the backend to %s, or remove it)", refused, d.Backend, name, d.Backend)
	}
	return fmt.Sprintf("refused %s; %s would work and is planned: with on_failure: warn, %s starts on it and apply warns until the setting is changed (set the backend to %s, or on_failure: block to stop %s instead)", refused, d.Backend, name, d.Backend, name)
}

func (o Options) decide(dist distro.Distro) (hostplan.Plan, error) {
	if o.Decide != nil {
		return o.Decide()
	}
	return hostplan.Load(hostplan.Host{Root: o.Root, ConfigFile: o.ConfigFile, Environ: o.Environ, Distribution: dist.Kind, Units: dist.Units}, hostplan.Boot)
}

// passedConfig is the config file the drop-ins name: "" for the default,
// which apply and verify read anyway.
func (o Options) passedConfig() string {
	if o.ConfigFile == hostfs.ConfigFile {
		return ""
	}
	return o.ConfigFile
}

// brokenConfig wires apply into the RKE2 units without a backend when the
// operator config cannot be read: apply exits 2 on the same error, so RKE2
// does not start until the config is fixed, rather than starting on the
// drop-in an earlier boot left there.
func brokenConfig(o Options, normal string, f facts.Facts, dist distro.Distro, cfgErr error) (Outcome, error) {
	names := unitNames(dist, rke2UnitNames(f))
	if len(names) == 0 {
		o.Log.Error("%v; %s, nothing to do", cfgErr, noUnits(dist.Kind))
		return BrokenConfig, cfgErr
	}
	files, err := units.Generate(units.Input{Units: names, ConfigFile: o.passedConfig(), Binary: o.Binary, Undecided: true})
	if err == nil {
		err = writeAll(normal, files)
	}
	if err != nil {
		return Failed, fmt.Errorf("%w; and wiring apply into %s failed: %w", cfgErr, strings.Join(names, ", "), err)
	}
	o.Log.Error("%v; %s will run `rke2-proxy-backend apply`, which exits 2 on this error, so %s does not start until it is fixed (the intent is unknown: the %s an earlier boot left is not used)",
		cfgErr, strings.Join(names, ", "), dist.Kind.Name(), rke2.DropInName)
	return BrokenConfig, cfgErr
}

func rke2UnitNames(f facts.Facts) []string {
	var names []string
	for _, u := range f.RKE2.Units {
		names = append(names, u.Name)
	}
	return names
}

// noUnits says which units are missing, in the words RKE2 nodes always got.
func noUnits(k distro.Kind) string { return "no " + k.Profile().AnyUnit + " installed" }

// inInitrd follows systemd: SYSTEMD_IN_INITRD when set (systemd >= 251),
// else the presence of /etc/initrd-release.
func inInitrd(root hostfs.Root, environ []string) bool {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "SYSTEMD_IN_INITRD="); ok && v != "" {
			return v == "1"
		}
	}
	return root.Exists(hostfs.InitrdRelease)
}

// writeAll writes every file under dir, or, if any write fails, removes
// what it wrote. Each file is written atomically (hostfs.WriteFileAtomic:
// a hidden temp file in its directory, renamed into place), so a generator
// killed mid-write (systemd's generator timeout, the OOM killer) leaves
// each drop-in whole or absent: never an empty rke2-server drop-in that
// starts RKE2 without apply, silently. A temp file a kill leaves is a
// dot-file, which systemd never loads, and systemd empties the generator
// directories before the next run. The fsyncs come with the writer and
// cost nothing where it matters: the generator directories are tmpfs under
// /run (no disk behind them, and a power cut empties them anyway, the next
// boot generating again); only a run by hand into a directory on disk pays.
func writeAll(dir string, files []units.File) error {
	host := hostfs.New("/")
	var created []string // files and directories, in creation order
	undo := func() {
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i])
		}
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		sub := filepath.Dir(p)
		if _, err := os.Lstat(sub); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				undo()
				return fmt.Errorf("create %s: %w", sub, err)
			}
			created = append(created, sub)
		}
		// A link someone left at p is replaced, never written through.
		changed, err := host.WriteFileAtomic(p, f.Data, 0o644)
		if changed {
			created = append(created, p)
		}
		if err != nil {
			undo()
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}
