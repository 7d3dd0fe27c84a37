package kmod

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// modprobeTimeout bounds one modprobe call: apply runs before RKE2 starts
// and must not hang a boot on a stuck module init.
const modprobeTimeout = 30 * time.Second

// pipeGrace is how long a modprobe that has ended (or been killed) may keep
// its stderr open through a child of its own before the pipe is closed on
// it: modprobe's install commands are shell lines that can leave a
// background process behind.
const pipeGrace = 2 * time.Second

// maxStderr bounds what is kept of modprobe's complaint.
const maxStderr = 4096

// Loader loads modules with modprobe.
type Loader struct {
	Root hostfs.Root
	// Modprobe is modprobe's host path; "" means hostfs.Modprobe.
	Modprobe string
	// Log receives one line per side effect ([started]/[finished]/[failed]).
	Log func(format string, args ...any)
	// Timeout bounds each modprobe call; 0 means 30 s.
	Timeout time.Duration
	// run is the exec seam: it runs argv and returns its stderr.
	run func(ctx context.Context, argv []string) (string, error)
}

// Failure is one module that could not be loaded.
type Failure struct {
	Module string `json:"module"`
	Error  string `json:"error"`
	// noLoader: modprobe itself is not there, so the module was never
	// tried (the kernel's own autoload would need it too).
	noLoader bool
}

// Result says what became of each module asked for.
type Result struct {
	// NoModuleSupport: the kernel has no loadable modules; nothing was tried.
	NoModuleSupport bool
	AlreadyLoaded   []string
	Builtin         []string
	Loaded          []string // loaded by this call
	// NotInKernel are modules this kernel's module tree does not have: no
	// .ko and no alias. decide leaves out of a backend's list those the
	// kernel config does not build as modules (nft_counter is part of
	// nf_tables.ko on 6.1), so one asked for and not there is missing; the
	// feature check says whether the backend can run without it.
	NotInKernel []string
	// Missing are modules modprobe failed to load.
	Missing []Failure
}

// Present lists every module that is in the kernel after the call.
func (r Result) Present() []string {
	out := append(append(append([]string{}, r.AlreadyLoaded...), r.Builtin...), r.Loaded...)
	return out
}

// MissingNames lists the modules that are not in the kernel after the call.
func (r Result) MissingNames() []string {
	out := append([]string{}, r.NotInKernel...)
	for _, f := range r.Missing {
		out = append(out, f.Module)
	}
	return out
}

// After is state once the call is done: a module modprobe failed to load
// is no longer counted as available (its file is in the module tree, but
// this kernel refuses it), so the feature check after the preload sees a
// backend whose module would not load as unable to run. One never tried
// (no modprobe installed) is left to the module tree's word.
func (r Result) After(state State) State {
	if len(r.Missing) == 0 {
		return state
	}
	avail := make(map[string]bool, len(state.Available))
	for m, ok := range state.Available {
		avail[m] = ok
	}
	for _, f := range r.Missing {
		if !f.noLoader {
			delete(avail, Normalize(f.Module))
		}
	}
	state.Available = avail
	return state
}

// Err is nil when every module is present, else one error naming each
// missing module and modprobe's complaint.
func (r Result) Err() error {
	if len(r.Missing) == 0 {
		return nil
	}
	parts := make([]string, len(r.Missing))
	for i, f := range r.Missing {
		parts[i] = f.Module + " (" + f.Error + ")"
	}
	return fmt.Errorf("kernel modules not available: %s", strings.Join(parts, "; "))
}

// Load makes sure each module is in the kernel: already loaded and built-in
// ones are skipped, so are ones the module tree does not have, and the rest
// go through modprobe one at a time so a failure names its module. It never
// fails as a whole; see Result.Err.
func (l Loader) Load(ctx context.Context, state State, modules []string) Result {
	var r Result
	if !state.Supported {
		r.NoModuleSupport = true
		return r
	}
	modprobe := l.Modprobe
	if modprobe == "" {
		modprobe = hostfs.Modprobe
	}
	run := l.run
	if run == nil {
		timeout := l.Timeout
		if timeout <= 0 {
			timeout = modprobeTimeout
		}
		run = func(ctx context.Context, argv []string) (string, error) { return runCommand(ctx, argv, timeout) }
	}
	for _, m := range modules {
		n := Normalize(m)
		switch {
		case state.Loaded[n]:
			r.AlreadyLoaded = append(r.AlreadyLoaded, m)
			continue
		case state.Builtin[n]:
			r.Builtin = append(r.Builtin, m)
			continue
		case state.AvailableKnown && !state.Available[n]:
			r.NotInKernel = append(r.NotInKernel, m)
			continue
		}
		argv := []string{l.Root.Path(modprobe), "--", m}
		l.log("[started]  loading kernel module %s: %s", m, strings.Join(argv, " "))
		stderr, err := run(ctx, argv)
		if err != nil {
			msg, noLoader := strings.TrimSpace(stderr), false
			if err := hostfs.MissingTool(argv[0], "loading kernel module "+m, err); hostfs.IsMissingTool(err) {
				msg, noLoader = err.Error(), true
			}
			if msg == "" {
				msg = err.Error()
			}
			l.log("[failed]   loading kernel module %s: %s: %s", m, err, msg)
			r.Missing = append(r.Missing, Failure{Module: m, Error: msg, noLoader: noLoader})
			continue
		}
		l.log("[finished] loading kernel module %s", m)
		state.Loaded[n] = true
		r.Loaded = append(r.Loaded, m)
	}
	return r
}

func (l Loader) log(format string, args ...any) {
	if l.Log != nil {
		l.Log(format, args...)
	}
}

// runCommand runs modprobe bounded (see boundexec): killed with anything it
// started at the limit, and not waited for beyond pipeGrace when a child
// it left holds stderr.
func runCommand(ctx context.Context, argv []string, timeout time.Duration) (string, error) {
	res, err := boundexec.Run(ctx, boundexec.Command{
		Argv: argv, Env: os.Environ(), Timeout: timeout, Grace: pipeGrace, MaxOutput: maxStderr,
	})
	return res.Stderr, err
}
