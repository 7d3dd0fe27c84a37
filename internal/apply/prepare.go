package apply

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// PrepareOptions are one ExecStartPre run's settings: what the command
// line was given, and the seams its tests replace.
type PrepareOptions struct {
	Root hostfs.Root
	// Forced is the generator's plan (apply --backend; "" decides now).
	Forced backend.Backend
	// ConfigEnv is RKE2_CONFIG_FILE from apply's environment.
	ConfigEnv string
	DryRun    bool
	// Modprobe overrides hostfs.Modprobe; Systemctl hostfs.Systemctl.
	Modprobe  string
	Systemctl string
	// LockWait bounds the wait for another apply (0: DefaultLockWait).
	LockWait time.Duration
	// NoTrial skips the trial (bench/apply.sh's pairs); TrialUnderRoot runs
	// it under --root anyway, on this machine's kernel and loaders.
	NoTrial        bool
	TrialUnderRoot bool
	// Trial proves one backend (nil: Trial, the real load in a throwaway
	// network namespace). The re-decide loop's unit tests replace it.
	Trial  func(ctx context.Context, b backend.Backend, k rke2.KubeVersion) TrialResult
	Stdout io.Writer
	Log    func(format string, args ...any)
	// Distribution is the node's ("": RKE2); OnHost finds it.
	Distribution distro.Kind
}

// Verdict is what a run means for RKE2's start: the exit code cli gives.
type Verdict int

const (
	// Honoured: the plan was carried out (or nothing stood in its way).
	Honoured Verdict = iota
	// Warned: the plan could not be honoured and on_failure is warn, so
	// RKE2 starts anyway (exit 0, the warning logged).
	Warned
	// Blocked: the plan could not be honoured and on_failure is block, or
	// the run itself failed: RKE2 must not start (exit 1, Message says why).
	Blocked
)

// Outcome is what Prepare did and what it means.
type Outcome struct {
	Verdict Verdict
	// Message is the failure to report for Blocked.
	Message string
	// Input is the decision carried out (after Settle and the trials).
	Input  Input
	Result Result
}

// Prepare is apply's whole ExecStartPre sequence on a decision already
// made (in): settle it against the generator's plan and RKE2_CONFIG_FILE,
// prove the backend by trial (deciding again when the kernel rejects it),
// load its modules, write the drop-in and, on a server that asks for it,
// the CNI's HelmChartConfig, record the plan, start verify when the
// generator could not wire it, and weigh what failed by on_failure.
//
// The error is an RKE2 config that cannot be read (exit 2): its intent is
// unknown.
func Prepare(ctx context.Context, o PrepareOptions, in Input) (Outcome, error) {
	logf := o.log
	in, mainFile, err := Settle(o.Root, in, o.Forced, o.ConfigEnv)
	if err != nil {
		return Outcome{Input: in}, err
	}
	cfg := in.Config
	c := newChooser(o, in.Facts, cfg, in.Decision)
	switch root := o.Root; {
	case o.NoTrial:
	case !root.IsHost() && !o.TrialUnderRoot:
		logf("trial skipped: under --root %s the running kernel and its loaders are this machine's, not that host's, so a trial here would prove nothing about it; apply on that host proves the backend", root.Dir())
	default:
		if !root.IsHost() {
			logf("trial under --root %s on this machine's kernel and loaders (--trial-under-root): it proves nothing about that host", root.Dir())
		}
		c.trials = true
	}
	d, problems := c.prove(ctx, c.first(in.Decision))
	problems = append(append([]string{}, in.Problems...), problems...)
	f := c.f
	for _, u := range f.Unreadable {
		logf("warning: %s", u)
	}
	switch {
	case d.Disabled:
		logf("disabled (source %s): %s", d.Source, strings.Join(d.Reasons, " "))
	case len(problems) > 0:
		logf("not carried out: backend %s (source %s): %s", d.Backend, d.Source, strings.Join(d.Reasons, " "))
	default:
		logf("backend %s (source %s): %s", d.Backend, d.Source, strings.Join(d.Reasons, " "))
	}
	refusals := decide.KubeProxyRefusals(f, cfg, d)
	logKubeProxyRefusals(refusals, logf)

	ro := Options{
		Root: o.Root, RKE2Config: mainFile, DryRun: o.DryRun, Modprobe: o.Modprobe, LockWait: o.LockWait,
		Stdout: o.Stdout, Log: logf, Distribution: o.Distribution,
	}
	in = Input{Facts: f, Config: cfg, Decision: d, Problems: problems, Warnings: findingTexts(refusals), chooser: c}
	res, err := Run(ctx, ro, in)
	in.Facts, in.Decision = c.f, res.Plan.Decision
	out := Outcome{Input: in, Result: res}
	problems = res.Problems
	if err == nil && len(problems) == 0 && !o.DryRun {
		writeCNIManifests(ro, f, cfg, res.Plan.Decision, logf)
	}
	if !o.DryRun {
		Journal(res.Plan, problems)
	}
	if err != nil {
		return out.block("apply: %v", err), nil
	}
	blocking := cfg.OnFailure == config.OnFailureBlock && (len(problems) > 0 || len(refusals) > 0)
	if !o.DryRun && o.Forced == "" && !blocking {
		if unit := OwnRKE2Unit(); unit != "" {
			// RKE2 starts: verify must follow, as the decided wiring's Wants= makes it.
			if err := CompleteWiring(ctx, o.Systemctl, logf); err != nil {
				logf("warning: %v; start it by hand once %s is up", err, unit)
			}
		}
	}
	name := o.Distribution.Name()
	out = onFailure(out, cfg, o.DryRun, name, logf)
	if w := c.explicitWarning(res.Plan.Applied.Backend); w != "" && len(problems) == 0 {
		// The operator's backend replaced by one that works: on_failure:
		// warn lets RKE2 start, loudly.
		if o.DryRun {
			w = "a real run would say: " + w
		}
		logf("warning: %s", w)
		out.Verdict = Warned
	}
	return weighKubeProxyRefusals(out, refusals, cfg, o.DryRun, name, logf), nil
}

// UnknownIntent is what apply says when the operator config cannot be
// loaded (exit 2): neither a fresh decision nor the drop-in an earlier boot
// left may stand in for an intent it cannot read.
func UnknownIntent(cfgErr error, name string) error {
	return fmt.Errorf("%w; %s will not start until this is fixed (the operator's intent is unknown, so %s from an earlier boot is not used); check with `rke2-proxy-backend detect`",
		cfgErr, name, rke2.DropInName)
}

// onFailure weighs a run's problems by the operator's on_failure; name is
// the distribution whose start it decides.
func onFailure(out Outcome, cfg config.Config, dryRun bool, name string, logf func(string, ...any)) Outcome {
	problems := out.Result.Problems
	if len(problems) == 0 {
		return out
	}
	msg := strings.Join(problems, "; ")
	reads := out.Result.RKE2Reads
	if reads == "" {
		reads = ReadsDefaults
	}
	if dryRun {
		// The same exit code a real run would give, in the conditional.
		if cfg.OnFailure == config.OnFailureBlock {
			return out.block("apply --dry-run: a real run could not honour the plan (on_failure: block, %s would not start): %s", name, msg)
		}
		logf("warning: a real run could not honour the plan (on_failure: warn, %s would start with %s): %s", name, reads, msg)
		out.Verdict = Warned
		return out
	}
	if cfg.OnFailure == config.OnFailureBlock {
		return out.block("apply: cannot honour the plan (on_failure: block, %s will not start): %s", name, msg)
	}
	logf("warning: cannot honour the plan (on_failure: warn, %s starts with %s): %s", name, reads, msg)
	out.Verdict = Warned
	return out
}

func (out Outcome) block(format string, args ...any) Outcome {
	out.Verdict, out.Message = Blocked, fmt.Sprintf(format, args...)
	return out
}

func (o PrepareOptions) log(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}
