package switchover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// prepare checks everything a new switch to `to` needs before it changes
// anything, and assembles it from the backend the plan records; done is
// set (with the line said) when kube-proxy already uses `to`.
func (r Request) prepare(ctx context.Context, to backend.Backend) (s *Switch, done bool, err error) {
	cfg, err := config.Load(r.Root, r.ConfigFile, os.Environ(), facts.ReadCmdline(r.Root))
	if err != nil {
		return nil, false, usage(err)
	}
	if cfg.BackendSource == config.SourceEnv || cfg.BackendSource == config.SourceCmdline {
		return nil, false, usage(fmt.Errorf("backend %s is set by the %s, which overrides %s: a switch recorded in the file would not take effect; remove the override first", cfg.Backend, sourceName(cfg.BackendSource), r.ConfigFile))
	}
	// The facts apply will see when the switch restarts RKE2: the binary's
	// release (a gate it removed), the host's nft (a skewed pair).
	// The distribution's own config and units: on k3s, k3s's.
	opts := hostplan.Apply
	opts.Distribution = r.distro.Kind
	f := facts.Probe(r.Root, opts)
	p, err := plan.Read(r.Root)
	// A migration off ipvs: the plan says kube-proxy runs ipvs (the
	// operator may have removed proxy-mode=ipvs already, waiting for this
	// switch's restart), or RKE2's config still sets it. Its report comes
	// first, refused or not: it is what the operator changes.
	fromIPVS := err == nil && p.Decision.ProxyMode == decide.ProxyModeIPVS
	var report []Translation
	if args := operatorArgs(f, r.dropInPath()); fromIPVS || pinsIPVS(args) {
		report = TranslateIPVS(args, cfg.KubeProxy.ExtraArgs, r.ConfigFile, to)
		if r.report != nil {
			*r.report = report
		}
		from := to
		if err == nil {
			from = p.AppliedBackend()
		}
		writeTranslation(r.Out, from, to, report)
	}
	if why := decide.SwitchRefusal(f, to); why != "" {
		return nil, false, usage(fmt.Errorf("--to %s: %s", to, why))
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("no %s: RKE2 has not started with rke2-proxy-backend this boot, so nothing says which backend kube-proxy uses; start RKE2 (or set backend: %s in %s and restart it)", hostfs.PlanFile, to, r.ConfigFile)
	case err != nil:
		return nil, false, err
	case p.Decision.Disabled:
		return nil, false, fmt.Errorf("%s says rke2-proxy-backend is off (backend: off): set backend: %s in %s and restart RKE2 instead", hostfs.PlanFile, to, r.ConfigFile)
	case p.AppliedBackend() == "":
		// Nothing says which backend kube-proxy runs on (RKE2's own
		// defaults), so nothing says what to clean after the restart.
		return nil, false, fmt.Errorf("%s says apply gave RKE2 no backend this boot (%s): set backend: %s in %s and restart RKE2 instead", hostfs.PlanFile, p.Applied.Nothing, to, r.ConfigFile)
	case p.AppliedBackend() == to && !fromIPVS:
		if _, err := fmt.Fprintf(r.Out, "switch: kube-proxy already uses %s (%s); nothing to do\n", to, hostfs.PlanFile); err != nil {
			return nil, true, err
		}
		// A retried switch (SUC's next Job) must not pass a failing node.
		if alt := r.hostAlternative(); alt != nil {
			if gap := alternativeGap(alt(), to, "rke2-server (rke2-agent on agents)"); gap != "" {
				return nil, true, fmt.Errorf("%w: %s", ErrStillFailing, gap)
			}
		}
		return nil, true, nil
	}
	s, err = r.assemble(ctx, p.AppliedBackend(), to, switchjournal.File{Root: r.Root}, nil, nil)
	if err != nil {
		return nil, false, err
	}
	s.FromIPVS, s.Translation = fromIPVS, translationLines(report)
	return s, false, nil
}

// operatorArgs are RKE2's kube-proxy-arg items without the tool's drop-in's.
func operatorArgs(f facts.Facts, ours string) []rke2.Setting {
	var out []rke2.Setting
	for _, a := range f.RKE2.Config.Settings(rke2.KeyKubeProxyArg) {
		if a.File != ours {
			out = append(out, a)
		}
	}
	return out
}

// pinsIPVS: the operator's items (operatorArgs) end on proxy-mode=ipvs.
func pinsIPVS(args []rke2.Setting) bool {
	mode := ""
	for _, a := range args {
		if name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a.Value), "--"), "="); name == "proxy-mode" {
			mode = strings.TrimSpace(value)
		}
	}
	return mode == decide.ProxyModeIPVS
}

func sourceName(src string) string {
	if src == config.SourceCmdline {
		return "kernel command line (rke2.proxy_backend=)"
	}
	return "environment (RKE2_PROXY_BACKEND)"
}

// assemble builds the switch from one backend to another on r's root,
// from the host's own parts: its systemctl, RKE2's unit, verify,
// cleanup's code and the journal.
func (r Request) assemble(ctx context.Context, from, to backend.Backend, j switchjournal.Store, lock NodeLock, rctx context.Context) (*Switch, error) {
	// A root without a systemctl still plans (--dry-run); the restart
	// step then fails with the reason, before RKE2 is touched.
	sc, _ := SystemctlUnder(r.Root, r.Timeout)
	eff := r.rke2Layout().Config
	// On the host, a missing systemctl is named with the package to
	// install, before anything changes: the switch could not restart RKE2.
	if r.Root.IsHost() {
		if _, err := hostfs.LookTool(hostfs.Systemctl, "switch (it restarts RKE2)"); err != nil {
			return nil, fmt.Errorf("%w; nothing was changed", err)
		}
	}
	// One systemctl for every unit FindUnit may ask about.
	asked := append(r.distro.Kind.Profile().Units, r.distro.UnitNames()...)
	slices.Sort(asked)
	active := sc.Active(ctx, slices.Compact(asked)...)
	unit, err := FindUnit(ctx, r.distro, func(_ context.Context, u string) bool { return active[u] })
	if err != nil {
		return nil, err
	}
	group, err := cleanup.GroupOn(r.Root, r.distro.Kind)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	return &Switch{
		From:      from,
		To:        to,
		Config:    FileConfig{Root: r.Root, File: r.ConfigFile},
		Plans:     FilePlan{Root: r.Root},
		Restarter: UnitRestarter{Systemctl: sc, Unit: unit, Root: &r.Root, Log: r.Log},
		Verifier: LiveVerifier{
			Root:         r.Root,
			Wait:         r.Timeout,
			ProxyModeURL: kubeproxy.ProxyModeEndpoint(eff).URL,
			Progress:     func(line string) { fmt.Fprintln(r.Log, "rke2-proxy-backend: switch: verify: "+line) },
		},
		Cleaner:         LiveCleaner{Group: group},
		Sweeper:         LiveSweeper{},
		Hints:           LiveHints{},
		VerifyUnit:      VerifyUnitRerunner{Systemctl: sc},
		Alternative:     r.hostAlternative(),
		Journal:         j,
		Lock:            lock,
		RollbackContext: rctx,
		Log:             r.Log,
	}, nil
}

// ownNetns refuses --root in this machine's network namespace: the rules a
// switch reads and removes are the namespace's, and under --root they must
// be the fixture's, not the running host's kube-proxy's. A namespace is
// its own when it is not PID 1's or, where PID 1's cannot be read (a
// sandbox), when it has no interface but loopback, as one made by
// unshare -n; a host's always has more.
func ownNetns(root hostfs.Root) error {
	if root.IsHost() {
		return nil
	}
	self, err1 := os.Readlink("/proc/self/ns/net")
	pid1, err2 := os.Readlink("/proc/1/ns/net")
	if err1 == nil && err2 == nil {
		if self != pid1 {
			return nil
		}
	} else if ifs, err := net.Interfaces(); err == nil && len(ifs) == 1 && ifs[0].Flags&net.FlagLoopback != 0 {
		return nil
	}
	return fmt.Errorf("--root %s: switch under --root reads and removes the rules of the network namespace it runs in, which looks like this machine's (%s): run it in one of its own (unshare -n)", root.Dir(), self)
}

// dropInPath is the drop-in whose directory the node lock falls back to.
func (r Request) dropInPath() string { return dropInPathOf(r.rke2Layout()) }

// rke2Layout is the layout Do read, or a fresh read without it.
func (r Request) rke2Layout() facts.RKE2 {
	if r.layout != nil {
		return *r.layout
	}
	layout, _ := facts.RKE2Layout(r.Root, r.distro.Kind)
	return layout
}
