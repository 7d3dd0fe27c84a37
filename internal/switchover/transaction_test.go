package switchover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// node plays the host behind the interfaces: RKE2's restart reads the
// operator config through the real loader (as apply does) and kube-proxy
// then runs on that backend; verify passes only for the backend it runs on.
type node struct {
	t    *testing.T
	root hostfs.Root
	mu   sync.Mutex
	live backend.Backend
	lock *fakeLock
	// at is called at each interface call with its name ("restart",
	// "verify", "clean", "hints", "rerun"), before it acts.
	at       func(ctx context.Context, what string)
	restarts []backend.Backend
	m        migration
	// ipvsLeft: kube-proxy's ipvs leftovers are there (until Sweep).
	ipvsLeft bool
}

// migration is one kind of switch the transaction tests run: between two
// backends of iptables mode, or off ipvs (to nftables, or to iptables
// mode on the backend ipvs ran over).
type migration struct {
	name               string
	from, to           backend.Backend
	ipvs               bool
	original, switched string
}

var migrations = []migration{
	{"iptables-legacy to iptables-nft", backend.IptablesLegacy, backend.IptablesNFT, false, originalConfig, switchedConfig},
	{"ipvs over iptables-nft to nftables", backend.IptablesNFT, backend.NFTables, true, "backend: iptables-nft\n", "backend: nftables\n"},
	{"ipvs over iptables-nft to iptables mode", backend.IptablesNFT, backend.IptablesNFT, true, "# under ipvs\nbackend: iptables-nft\n", "# under ipvs\nbackend: iptables-nft\n"},
}

func (n *node) Sweep(ctx context.Context) (cleanup.AfterIPVS, error) {
	n.hook(ctx, "sweep")
	if !n.m.ipvs {
		n.t.Error("a switch between iptables backends swept ipvs leftovers")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ipvsLeft = false
	return cleanup.AfterIPVS{}, ctx.Err()
}

func (n *node) hook(ctx context.Context, what string) {
	if n.at != nil {
		n.at(ctx, what)
	}
}

func (n *node) Describe() string { return "rke2-server.service (test)" }

func (n *node) Restart(ctx context.Context, _ backend.Backend) error {
	if n.lock.held {
		n.t.Error("RKE2 restarted with the node lock held: its ExecStartPre apply would wait for it")
	}
	n.hook(ctx, "restart")
	cfg, err := config.Load(n.root, hostfs.ConfigFile, nil, nil)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.live = backend.Backend(cfg.Backend)
	n.restarts = append(n.restarts, n.live)
	return ctx.Err()
}

func (n *node) Verify(ctx context.Context, b backend.Backend) (*verify.Result, error) {
	n.hook(ctx, "verify")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ok := n.live == b
	return &verify.Result{OK: ok, Verdict: map[bool]string{true: "ok", false: "failed"}[ok],
		Backends: []verify.BackendState{{Backend: n.live, Complete: true}}}, nil
}

func (n *node) Clean(ctx context.Context, b, _ backend.Backend) (*cleanup.Plan, error) {
	n.hook(ctx, "clean")
	if n.m.ipvs && n.m.from == n.m.to {
		n.t.Errorf("the migration off ipvs on %s cleaned %s: its kube-proxy rules are the live ones", n.m.from, b)
	}
	return &cleanup.Plan{Backend: b}, ctx.Err()
}

func (n *node) Owners() ownership.Group { return nil }

func (n *node) Tidy(ctx context.Context, b backend.Backend) (*HintTidy, error) {
	n.hook(ctx, "hints")
	return &HintTidy{Want: verify.HintBackend(b)}, ctx.Err()
}

func (n *node) Rerun(ctx context.Context) error { n.hook(ctx, "rerun"); return nil }

type fakeLock struct{ held bool }

func (l *fakeLock) Unlock()                    { l.held = false }
func (l *fakeLock) Lock(context.Context) error { l.held = true; return nil }

// journalHook is the real switchjournal.File with a hook after each write:
// the point where a signal or a kill lands "at" a step.
type journalHook struct {
	switchjournal.File
	after func(j *switchjournal.Journal)
	// before is called before each write with the entry, and before the
	// removal with nil.
	before func(j *switchjournal.Journal)
}

func (h journalHook) Remove() error {
	if h.before != nil {
		h.before(nil)
	}
	return h.File.Remove()
}

func (h journalHook) Write(j *switchjournal.Journal) error {
	if h.before != nil {
		h.before(j)
	}
	if err := h.File.Write(j); err != nil {
		return err
	}
	if h.after != nil {
		h.after(j)
	}
	return nil
}

const originalConfig = "# operator notes\nbackend: iptables-legacy # NAS kernel\nverify:\n  wait: 2m\n"

var switchedConfig = strings.Replace(originalConfig, "iptables-legacy", "iptables-nft", 1)

func newNode(t *testing.T) *node { return newNodeFor(t, migrations[0]) }

func newNodeFor(t *testing.T, m migration) *node {
	root := rootWithConfig(t, m.original, 0o640)
	return &node{t: t, root: root, live: m.from, lock: &fakeLock{held: true}, m: m, ipvsLeft: m.ipvs}
}

func (n *node) switcher(j switchjournal.Store, rctx context.Context, log *bytes.Buffer) *Switch {
	return &Switch{
		From: n.m.from, To: n.m.to, FromIPVS: n.m.ipvs, Sweeper: n,
		Config: FileConfig{Root: n.root, File: hostfs.ConfigFile}, Restarter: n, Verifier: n,
		Cleaner: n, Hints: n, VerifyUnit: n, Journal: j, Lock: n.lock, RollbackContext: rctx, Log: log,
	}
}

// stepNames are the journal's names of the steps n's switch runs.
func (n *node) stepNames() []string {
	var out []string
	for _, st := range n.switcher(switchjournal.File{Root: n.root}, nil, nil).forward(nil) {
		out = append(out, st.name)
	}
	return out
}

// swept asserts a migration off ipvs that changed the node left none of
// ipvs's state, whichever way it ended (a rollback sweeps too).
func (n *node) swept(t *testing.T, log *bytes.Buffer) {
	t.Helper()
	if n.ipvsLeft {
		t.Errorf("ipvs leftovers remain after the %s:\n%s", n.m.name, log)
	}
}

// ends asserts the node is whole: the config is want byte for byte with
// its mode, kube-proxy runs on the backend it names, no journal is left.
func (n *node) ends(t *testing.T, want string, log *bytes.Buffer) {
	t.Helper()
	got, err := os.ReadFile(n.root.Path(hostfs.ConfigFile))
	if err != nil || string(got) != want {
		t.Errorf("config is %q (%v), want %q\nlog:\n%s", got, err, want, log)
	}
	if fi, err := os.Stat(n.root.Path(hostfs.ConfigFile)); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("config mode: %v %v", fi.Mode(), err)
	}
	wantLive := n.m.from
	if want == n.m.switched {
		wantLive = n.m.to
	}
	if n.live != wantLive {
		t.Errorf("kube-proxy runs on %s, the config says %s", n.live, wantLive)
	}
	if n.root.Exists(hostfs.SwitchJournal) {
		t.Errorf("journal left:\n%s", log)
	}
}

// crash runs fn in a goroutine that dies at the point kill() is called, as
// kill -9 would stop the process: nothing after it runs, defers aside.
func crash(fn func(kill func())) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(runtime.Goexit)
	}()
	<-done
}

// Every forward step, interrupted three ways: a signal while it is the
// journaled step (Run rolls back), a kill -9 right after its journal
// entry, and a kill -9 right after the step did its work. Each kill is
// then finished by --resume and, on a fresh copy, by --rollback; the
// config ends the target or the original byte for byte, kube-proxy on the
// backend it names, and no journal.
func TestSwitchInterruptedAtEachStep(t *testing.T) {
	for _, m := range migrations {
		t.Run(m.name, func(t *testing.T) { interruptEachStep(t, m) })
	}
}

// interruptEachStep is TestSwitchInterruptedAtEachStep for one kind of
// switch; a migration off ipvs also ends with ipvs's leftovers swept once
// it changed anything (a rollback sweeps as well).
func interruptEachStep(t *testing.T, m migration) {
	for i, name := range newNodeFor(t, m).stepNames() {
		t.Run("signal at "+name, func(t *testing.T) {
			n := newNodeFor(t, m)
			ctx, cancel := context.WithCancelCause(context.Background())
			var log bytes.Buffer
			j := journalHook{File: switchjournal.File{Root: n.root}, after: func(j *switchjournal.Journal) {
				if j.Phase == switchjournal.PhaseSwitch && j.Step == name {
					cancel(errors.New("interrupted by terminated"))
				}
			}}
			err := n.switcher(j, nil, &log).Run(ctx)
			switch {
			case i <= firstChange:
				// Before the config write, or at it before it ran: the
				// file is the original.
				if err == nil || !strings.Contains(err.Error(), "nothing changed") {
					t.Fatalf("want nothing changed, got %v", err)
				}
				n.ends(t, m.original, &log)
				if m.ipvs && !n.ipvsLeft {
					t.Errorf("nothing changed, yet ipvs was swept")
				}
				return
			case name == "rerun-verify-unit":
				// The verdict was in before the rerun: the switch is done.
				if err != nil {
					t.Fatal(err)
				}
				n.ends(t, m.switched, &log)
			default:
				if !errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), "interrupted by terminated") {
					t.Fatalf("want a rollback naming the signal, got %v\n%s", err, &log)
				}
				if m.ipvs && !strings.Contains(err.Error(), "iptables mode, not ipvs") {
					t.Errorf("the rolled-back migration does not say kube-proxy is in iptables mode: %v", err)
				}
				n.ends(t, m.original, &log)
			}
			if m.ipvs {
				n.swept(t, &log)
			}
		})
		for _, after := range []bool{false, true} {
			point := "before"
			if after {
				point = "after"
			}
			for _, finish := range []string{"resume", "rollback"} {
				t.Run(fmt.Sprintf("kill -9 %s %s, then --%s", point, name, finish), func(t *testing.T) {
					n := newNodeFor(t, m)
					var log bytes.Buffer
					killed := false
					crash(func(kill func()) {
						// Before: right after the step's journal entry. After:
						// once the step did its work, before the next entry.
						armed := false
						j := journalHook{File: switchjournal.File{Root: n.root},
							after: func(j *switchjournal.Journal) {
								if j.Phase == switchjournal.PhaseSwitch && j.Step == name {
									armed = true
									if !after {
										killed = true
										kill()
									}
								}
							},
							before: func(j *switchjournal.Journal) {
								if armed && after && (j == nil || j.Step != name) {
									killed = true
									kill()
								}
							}}
						if name == "rerun-verify-unit" {
							// The journal is gone before the rerun (the
							// verdict is in): die in the step itself.
							n.at = func(_ context.Context, what string) {
								if what == "rerun" {
									killed = true
									kill()
								}
							}
						}
						_ = n.switcher(j, nil, &log).Run(context.Background())
					})
					n.at = nil
					if !killed {
						t.Fatalf("the switch never reached %s\n%s", name, &log)
					}
					rec, err := switchjournal.File{Root: n.root}.Read()
					if name == "rerun-verify-unit" {
						// The journal goes before the rerun: nothing left.
						if rec != nil || err != nil {
							t.Fatalf("journal %+v, %v after the verdict", rec, err)
						}
						n.ends(t, m.switched, &log)
						return
					}
					if err != nil || rec == nil || rec.Phase != switchjournal.PhaseSwitch || rec.Step != name || string(rec.Config.Data) != m.original {
						t.Fatalf("journal after the kill: %+v, %v", rec, err)
					}
					if (rec.FromProxyMode == "ipvs") != m.ipvs {
						t.Fatalf("journal's from_proxy_mode %q for %s", rec.FromProxyMode, m.name)
					}
					n.lock.held = true
					// The resuming process knows the migration only from
					// the journal, as switch --resume does.
					s := n.switcher(switchjournal.File{Root: n.root}, nil, &log)
					s.FromIPVS = false
					if finish == "resume" {
						if err := s.Resume(context.Background(), rec); err != nil {
							t.Fatalf("resume: %v\n%s", err, &log)
						}
						n.ends(t, m.switched, &log)
					} else {
						if err := s.Rollback(context.Background(), rec); err != nil {
							t.Fatalf("rollback: %v\n%s", err, &log)
						}
						n.ends(t, m.original, &log)
					}
					if m.ipvs && !(finish == "rollback" && i < firstChange) {
						n.swept(t, &log)
					}
				})
			}
		}
	}
}

// Item 3: a kill -9 during the restart, then the config is already the
// switched one; finishing from the journal still restores the original,
// because the rollback reads the journal, not the file.
func TestRollbackAfterKillDuringRestartRestoresTheOriginal(t *testing.T) {
	n := newNode(t)
	var log bytes.Buffer
	crash(func(kill func()) {
		n.at = func(_ context.Context, what string) {
			if what == "restart" {
				kill()
			}
		}
		_ = n.switcher(switchjournal.File{Root: n.root}, nil, &log).Run(context.Background())
	})
	n.at = nil
	if got, _ := os.ReadFile(n.root.Path(hostfs.ConfigFile)); string(got) != switchedConfig {
		t.Fatalf("config before the rerun: %q", got)
	}
	rec, err := switchjournal.File{Root: n.root}.Read()
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if err := n.switcher(switchjournal.File{Root: n.root}, nil, &log).Rollback(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	n.ends(t, originalConfig, &log)
}

// A signal during the rollback (the second one) stops it where it is,
// journaled; --rollback (or --resume) then finishes it.
func TestSecondSignalStopsTheRollbackJournaled(t *testing.T) {
	for i, name := range rollbackSteps[:len(rollbackSteps)-1] {
		for _, finish := range []string{"resume", "rollback"} {
			t.Run(name+" then --"+finish, func(t *testing.T) {
				n := newNode(t)
				ctx, cancel := context.WithCancelCause(context.Background())
				rctx, rcancel := context.WithCancelCause(context.Background())
				var log bytes.Buffer
				j := journalHook{File: switchjournal.File{Root: n.root}, after: func(j *switchjournal.Journal) {
					if j.Phase == switchjournal.PhaseSwitch && j.Step == "wait" {
						cancel(errors.New("interrupted by terminated"))
					}
					if j.Phase == switchjournal.PhaseRollback && j.Step == name {
						rcancel(errors.New("interrupted again by terminated"))
					}
				}}
				err := n.switcher(j, rctx, &log).Run(ctx)
				if !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), "step "+name) || !strings.Contains(err.Error(), "--rollback") {
					t.Fatalf("want the rollback stopped at %s, got %v", name, err)
				}
				rec, err := switchjournal.File{Root: n.root}.Read()
				if err != nil || rec == nil || rec.Phase != switchjournal.PhaseRollback || rec.Step != rollbackSteps[i] {
					t.Fatalf("journal: %+v %v", rec, err)
				}
				s := n.switcher(switchjournal.File{Root: n.root}, nil, &log)
				if finish == "resume" {
					// Resuming a rollback finishes it, and the switch
					// still failed.
					if err := s.Resume(context.Background(), rec); !errors.Is(err, ErrRolledBack) {
						t.Fatalf("resume: %v\n%s", err, &log)
					}
				} else if err := s.Rollback(context.Background(), rec); err != nil {
					t.Fatalf("rollback: %v\n%s", err, &log)
				}
				n.ends(t, originalConfig, &log)
			})
		}
	}
}

// The restart runs without the node lock and the switch takes it back
// after: apply, as ExecStartPre, needs it meanwhile (node.Restart fails
// the test if it is held).
func TestLockLetGoForEachRestart(t *testing.T) {
	n := newNode(t)
	var log bytes.Buffer
	if err := n.switcher(switchjournal.File{Root: n.root}, nil, &log).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !n.lock.held {
		t.Error("the lock was not taken back after the restart")
	}
	if fmt.Sprint(n.restarts) != "[iptables-nft]" {
		t.Errorf("restarts: %v", n.restarts)
	}
	n.ends(t, switchedConfig, &log)
}

// The real lock: a second switch is refused at once, naming the first
// switch's pid, even with a long wait; an apply waits for a switch's lock
// (and gives up naming it) rather than writing under it.
func TestApplyLockRefusesASecondSwitch(t *testing.T) {
	root := hostfs.New(t.TempDir())
	first := &ApplyLock{Locking: apply.Locking{Root: root, DropInPath: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", Wait: time.Minute}}
	if err := first.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := &ApplyLock{Locking: first.Locking}
	start := time.Now()
	err := second.Lock(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("another rke2-proxy-backend switch (pid %d)", os.Getpid())) {
		t.Fatalf("want the holder named, got %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refusal took %v: a second switch must not wait for the first", took)
	}
	_, err = apply.Lock(context.Background(), apply.Locking{Root: root, Role: "apply", DropInPath: first.Locking.DropInPath, Wait: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "another rke2-proxy-backend switch") {
		t.Fatalf("apply: %v", err)
	}
	first.Unlock()
	if err := second.Lock(context.Background()); err != nil {
		t.Fatalf("after the first let go: %v", err)
	}
	second.Unlock()
}

// Item 4: a config that is a symlink stays that symlink; the file it
// points at gets the switch and, on rollback, its original bytes and mode;
// a link replaced meanwhile is put back.
func TestSymlinkedConfigStaysALink(t *testing.T) {
	root := hostfs.New(t.TempDir())
	target := "/srv/cm/rke2-proxy-backend.yaml"
	if err := os.MkdirAll(filepath.Dir(root.Path(target)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root.Path(target), []byte(originalConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(root.Path(hostfs.ConfigFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, root.Path(hostfs.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	c := FileConfig{Root: root, File: hostfs.ConfigFile}
	snap, err := c.Snapshot()
	if err != nil || snap.Link != target || string(snap.Data) != originalConfig || snap.Mode != 0o600 {
		t.Fatalf("snapshot %+v %v", snap, err)
	}
	isLink := func(when string) {
		t.Helper()
		if got, err := os.Readlink(root.Path(hostfs.ConfigFile)); err != nil || got != target {
			t.Errorf("%s: config is no longer the link to %s: %q %v", when, target, got, err)
		}
	}
	if err := c.Set(snap, backend.IptablesNFT); err != nil {
		t.Fatal(err)
	}
	isLink("after Set")
	if got, _ := os.ReadFile(root.Path(target)); string(got) != switchedConfig {
		t.Errorf("target after Set: %q", got)
	}
	// Config management replaced the link by a plain file meanwhile.
	os.Remove(root.Path(hostfs.ConfigFile))
	os.WriteFile(root.Path(hostfs.ConfigFile), []byte("backend: nftables\n"), 0o644)
	if err := c.Restore(snap); err != nil {
		t.Fatal(err)
	}
	isLink("after Restore")
	got, _ := os.ReadFile(root.Path(target))
	fi, _ := os.Stat(root.Path(target))
	if string(got) != originalConfig || fi.Mode().Perm() != 0o600 {
		t.Errorf("target after Restore: %q %v", got, fi.Mode())
	}
	// A dangling link is refused before anything is recorded.
	os.Remove(root.Path(target))
	if _, err := c.Snapshot(); err == nil || !strings.Contains(err.Error(), "which does not exist") {
		t.Errorf("dangling link: %v", err)
	}
}
