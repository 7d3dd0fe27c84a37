package apply

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2/dropin"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// fakeTrial rejects the backends in reject (with a complaint like
// iptables-nft-restore's on EL10) and records every backend it was asked
// to prove: the seam that lets the re-decide loop run without root.
type fakeTrial struct {
	reject map[backend.Backend]bool
	// unproven backends' trials could not tell (a timeout, the lock)
	unproven map[backend.Backend]bool
	asked    []backend.Backend
}

func (ft *fakeTrial) trial(_ context.Context, b backend.Backend, _ rke2.KubeVersion) TrialResult {
	ft.asked = append(ft.asked, b)
	if ft.reject[b] {
		return TrialResult{Backend: b, Failure: "Couldn't load match `statistic':No such file or directory (at line 3: -m statistic)"}
	}
	if ft.unproven[b] {
		return TrialResult{Backend: b, Unproven: "iptables-legacy-restore: it gave up waiting for the xtables lock after 20s"}
	}
	return TrialResult{Backend: b}
}

// prepare runs Prepare on h's probe with the default config changed by
// edit, the trial faked by ft, and forced as the generator's plan.
func prepare(t *testing.T, h *testhost.Host, ft *fakeTrial, forced backend.Backend, edit func(*config.Config)) (Outcome, string) {
	t.Helper()
	return prepareRun(t, h, ft, forced, edit, false)
}

func prepareRun(t *testing.T, h *testhost.Host, ft *fakeTrial, forced backend.Backend, edit func(*config.Config), dry bool) (Outcome, string) {
	t.Helper()
	in := probed(h)
	if edit != nil {
		edit(&in.Config)
		in.Decision = decide.Decide(in.Facts, in.Config)
	}
	var out, log bytes.Buffer
	o := PrepareOptions{Root: h.Root(), Forced: forced, DryRun: dry, TrialUnderRoot: true, Trial: ft.trial, Stdout: &out,
		Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
	res, err := Prepare(context.Background(), o, in)
	if err != nil {
		t.Fatal(err)
	}
	return res, log.String()
}

// The drop-in's backend as written, "" when none was.
func writtenBackend(t *testing.T, h *testhost.Host) string {
	t.Helper()
	data, err := os.ReadFile(h.Root().Path(dropInPath))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backend.All {
		if strings.Contains(string(data), `"rke2-proxy-backend/backend=`+string(b)+`"`) {
			return string(b)
		}
	}
	t.Fatalf("drop-in names no backend:\n%s", data)
	return ""
}

// Auto: the kernel rejects the first choice's trial, so apply decides
// again without it, proves the new choice, and carries that out.
func TestPrepareAutoDecidesAgainWhenTheTrialFails(t *testing.T) {
	h := debianHost(t)
	ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
	out, log := prepare(t, h, ft, "", nil)
	want := []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy}
	if !reflect.DeepEqual(ft.asked, want) {
		t.Fatalf("trials %v, want %v\n%s", ft.asked, want, log)
	}
	if out.Verdict != Honoured || out.Input.Decision.Backend != backend.IptablesLegacy || len(out.Result.Problems) != 0 {
		t.Fatalf("verdict %d, backend %s, problems %q\n%s", out.Verdict, out.Input.Decision.Backend, out.Result.Problems, log)
	}
	if why := out.Input.Facts.TrialFailed[string(backend.IptablesNFT)]; !strings.Contains(why, "Couldn't load match `statistic'") {
		t.Errorf("facts' trial failure for iptables-nft: %q", why)
	}
	if got := writtenBackend(t, h); got != string(backend.IptablesLegacy) {
		t.Errorf("drop-in for %q, want iptables-legacy", got)
	}
	check.Says(t, "log", log,
		"[failed]   trial of iptables-nft: Couldn't load match `statistic'",
		"trial of iptables-legacy: kube-proxy's rules for one service loaded in a throwaway network namespace",
		"backend iptables-legacy (source auto):",
	)
}

// A trial that could not tell (it ran out of time on a slow first boot,
// waited out the xtables lock) leaves the plan standing, generator's or
// operator's, whatever on_failure says: no fall forward, no refusal, no
// warning; the log says unproven and plan.json records the trial as
// unproven, never as passed. Before, such a trial was a rejection: a
// healthy node fell forward, and the NAS node ended on "no backend can
// run" (issue 30's VM tier).
func TestPrepareUnprovenTrialKeepsThePlan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forced backend.Backend
		edit   func(*config.Config)
	}{
		{"generator's plan", backend.IptablesLegacy, nil},
		{"operator's backend, block", "", func(c *config.Config) { c.Backend, c.OnFailure = string(backend.IptablesLegacy), config.OnFailureBlock }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := debianHost(t)
			ft := &fakeTrial{unproven: map[backend.Backend]bool{backend.IptablesLegacy: true}}
			out, log := prepare(t, h, ft, tc.forced, tc.edit)
			if want := []backend.Backend{backend.IptablesLegacy}; !reflect.DeepEqual(ft.asked, want) {
				t.Fatalf("trials %v, want %v\n%s", ft.asked, want, log)
			}
			if out.Verdict != Honoured || len(out.Result.Problems) != 0 || out.Input.Decision.Backend != backend.IptablesLegacy {
				t.Fatalf("verdict %d, problems %q, backend %s\n%s", out.Verdict, out.Result.Problems, out.Input.Decision.Backend, log)
			}
			check.Says(t, "log", log, "trial of iptables-legacy could not tell, so iptables-legacy stands unproven: iptables-legacy-restore: it gave up waiting for the xtables lock")
			if strings.Contains(log, "falling forward") || strings.Contains(log, "[failed]") || strings.Contains(log, "warning") {
				t.Errorf("an unproven trial is worded as a failure:\n%s", log)
			}
			if got := writtenBackend(t, h); got != string(backend.IptablesLegacy) {
				t.Errorf("drop-in for %q, want iptables-legacy", got)
			}
			p, err := plan.Read(h.Root())
			if err != nil {
				t.Fatal(err)
			}
			if p.AppliedBackend() != backend.IptablesLegacy || len(p.Refused) != 0 || p.FellForward != "" {
				t.Errorf("plan applied %+v, refused %+v, fell forward %q", p.Applied, p.Refused, p.FellForward)
			}
			if p.Trial == nil || p.Trial.Backend != backend.IptablesLegacy || p.Trial.Result != plan.TrialUnproven || !strings.Contains(p.Trial.Why, "xtables lock") {
				t.Errorf("plan's trial %+v, want iptables-legacy unproven with why", p.Trial)
			}
		})
	}
}

// A passed trial is recorded as passed.
func TestPreparePassedTrialIsRecorded(t *testing.T) {
	h := debianHost(t)
	out, log := prepare(t, h, &fakeTrial{}, "", nil)
	p, err := plan.Read(h.Root())
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Input.Decision.Backend; p.Trial == nil || p.Trial.Backend != b || p.Trial.Result != plan.TrialPassed || p.Trial.Why != "" {
		t.Errorf("plan's trial %+v, want %s passed\n%s", p.Trial, b, log)
	}
}

// The generator's automatic plan (--backend, the operator names no
// backend) that the kernel rejects falls forward (issue 30: the NAS node
// crash-looped on RKE2's defaults while apply knew legacy works): apply
// decides again, proves the new choice, writes it and says why in its log,
// the plan and the journal. on_failure is not asked, whatever it says; the
// dry run says the same and writes nothing.
func TestPrepareGeneratorsAutomaticPlanTheTrialRejectsFallsForward(t *testing.T) {
	for _, onFailure := range []string{config.OnFailureWarn, config.OnFailureBlock} {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dry-run=%t", onFailure, dry), func(t *testing.T) {
				h := debianHost(t)
				ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
				out, log := prepareRun(t, h, ft, backend.IptablesNFT, func(c *config.Config) { c.OnFailure = onFailure }, dry)
				if want := []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy}; !reflect.DeepEqual(ft.asked, want) {
					t.Fatalf("trials %v, want %v\n%s", ft.asked, want, log)
				}
				if out.Verdict != Honoured || out.Message != "" || len(out.Result.Problems) != 0 || out.Input.Decision.Backend != backend.IptablesLegacy {
					t.Fatalf("verdict %d, message %q, problems %q, backend %s\n%s", out.Verdict, out.Message, out.Result.Problems, out.Input.Decision.Backend, log)
				}
				check.Says(t, "log", log,
					"[failed]   trial of iptables-nft: Couldn't load match `statistic'",
					"iptables-nft, the generator's plan (apply --backend), cannot run on this host: falling forward to a fresh automatic decision",
					"trial of iptables-legacy: kube-proxy's rules for one service loaded",
					"backend iptables-legacy (source auto): iptables-nft, the generator's plan (apply --backend), cannot run on this host (Couldn't load match `statistic'")
				if strings.Contains(log, "cannot honour") || strings.Contains(log, "own defaults") || strings.Contains(log, "keeps the backend planned at boot") {
					t.Errorf("the fall forward is worded as a failure or a kept plan:\n%s", log)
				}
				if dry {
					if got := writtenBackend(t, h); got != "" {
						t.Errorf("the dry run wrote a drop-in for %s", got)
					}
					return
				}
				if got := writtenBackend(t, h); got != string(backend.IptablesLegacy) {
					t.Errorf("drop-in for %q, want iptables-legacy", got)
				}
				p, err := plan.Read(h.Root())
				if err != nil {
					t.Fatal(err)
				}
				if p.AppliedBackend() != backend.IptablesLegacy || p.Applied.By != plan.ByApply || p.Applied.DropIn != dropInPath || !p.Carried() {
					t.Errorf("plan applied %+v", p.Applied)
				}
				if len(p.Refused) != 1 || p.Refused[0].Backend != backend.IptablesNFT || p.Refused[0].Explicit || !strings.Contains(p.Refused[0].Why, "statistic") ||
					!strings.Contains(p.FellForward, "iptables-nft, the generator's plan (apply --backend), cannot run on this host") {
					t.Errorf("plan refused %+v, fell forward %q", p.Refused, p.FellForward)
				}
				msg, _, fields := journalEntry(p, out.Result.Problems)
				check.Says(t, "journal", msg, "applied kube-proxy backend iptables-legacy (source auto), falling forward: iptables-nft, the generator's plan")
				if fields["RKE2_PROXY_BACKEND_APPLIED"] != "iptables-legacy" || !strings.Contains(fields["RKE2_PROXY_BACKEND_REFUSED"], "iptables-nft") {
					t.Errorf("journal fields %q", fields)
				}
			})
		}
	}
}

// The operator's own backend the kernel rejects is never replaced
// silently: on_failure: warn starts RKE2 on the backend that works, with
// a warning naming both and how to silence it; block keeps RKE2 down and
// names the backend that would work, writing nothing.
func TestPrepareOperatorsBackendTheTrialRejects(t *testing.T) {
	for _, tc := range []struct {
		onFailure string
		verdict   Verdict
		says      []string
	}{
		{config.OnFailureWarn, Warned, []string{"warning: RKE2_PROXY_BACKEND=iptables-nft in the environment asks for iptables-nft, which cannot run on this host: Couldn't load match `statistic'",
			"RKE2 starts on iptables-legacy instead (its trial passed), as on_failure: warn allows. To silence this warning, set iptables-legacy (or auto) there; or set on_failure: block"}},
		{config.OnFailureBlock, Blocked, []string{"apply: cannot honour the plan (on_failure: block, RKE2 will not start): RKE2_PROXY_BACKEND=iptables-nft in the environment asks for iptables-nft, which cannot run on this host: Couldn't load",
			"iptables-legacy would work (its trial passed): set it there, or auto; or set on_failure: warn"}},
	} {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dry-run=%t", tc.onFailure, dry), func(t *testing.T) {
				h := debianHost(t)
				ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
				out, log := prepareRun(t, h, ft, "", func(c *config.Config) {
					c.Backend, c.BackendSource, c.OnFailure = "iptables-nft", "env", tc.onFailure
				}, dry)
				if want := []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy}; !reflect.DeepEqual(ft.asked, want) {
					t.Fatalf("trials %v, want %v\n%s", ft.asked, want, log)
				}
				said := log
				if tc.verdict == Blocked {
					said = out.Message
				}
				if out.Verdict != tc.verdict {
					t.Fatalf("verdict %d, want %d; message %q\n%s", out.Verdict, tc.verdict, out.Message, log)
				}
				switch {
				case dry && tc.verdict == Blocked:
					check.Says(t, "message", said, "apply --dry-run: a real run could not honour the plan (on_failure: block, RKE2 would not start): RKE2_PROXY_BACKEND=iptables-nft")
				case dry:
					check.Says(t, "log", said, "warning: a real run would say: "+strings.TrimPrefix(tc.says[0], "warning: "), tc.says[1])
				default:
					check.Says(t, "output", said, tc.says...)
				}
				want := string(backend.IptablesLegacy)
				if dry || tc.verdict == Blocked {
					want = ""
				}
				if got := writtenBackend(t, h); got != want {
					t.Errorf("drop-in for %q, want %q", got, want)
				}
				if dry {
					return
				}
				p, err := plan.Read(h.Root())
				if err != nil {
					t.Fatal(err)
				}
				if p.AppliedBackend() != backend.Backend(want) || len(p.Refused) != 1 || !p.Refused[0].Explicit || p.Refused[0].Backend != backend.IptablesNFT || p.FellForward != "" {
					t.Errorf("plan applied %+v, refused %+v, fell forward %q", p.Applied, p.Refused, p.FellForward)
				}
				if tc.verdict == Blocked && !strings.Contains(p.Applied.Nothing, "iptables-legacy would work") {
					t.Errorf("plan's nothing %q does not name the backend that would work", p.Applied.Nothing)
				}
				if tc.verdict == Warned && !strings.Contains(strings.Join(p.Warnings, " "), "To silence this") {
					t.Errorf("plan warnings %q lack the warning", p.Warnings)
				}
			})
		}
	}
}

// An operator's backend the facts already rule out (decide refused it:
// no nf_tables in this kernel) is weighed by on_failure the same way,
// although every trial passes.
func TestPrepareOperatorsBackendTheKernelCannotRun(t *testing.T) {
	for _, tc := range []struct {
		onFailure string
		verdict   Verdict
		written   string
	}{{config.OnFailureWarn, Warned, "iptables-legacy"}, {config.OnFailureBlock, Blocked, ""}} {
		t.Run(tc.onFailure, func(t *testing.T) {
			h := testhost.New(t).Synology44().RKE2Unit("tarball", "agent").RKE2Config("config.yaml", operatorConfig)
			kmodtest.Install(t, h.Dir(), h.Release())
			old, err := dropin.Render(rke2.DropIn{Backend: backend.IptablesNFT, KubeProxyEnv: []string{"IPTABLES_MODE=nft"}})
			if err != nil {
				t.Fatal(err)
			}
			h.File(dropInPath, string(old)) // an earlier boot's: replaced (warn) or removed (block)
			ft := &fakeTrial{}
			out, log := prepare(t, h, ft, backend.IptablesLegacy, func(c *config.Config) {
				c.Backend, c.BackendSource, c.File, c.OnFailure = "iptables-nft", "config", hostfs.ConfigFile, tc.onFailure
			})
			if out.Verdict != tc.verdict || writtenBackend(t, h) != tc.written {
				t.Fatalf("verdict %d (want %d), drop-in %q (want %q); message %q\n%s", out.Verdict, tc.verdict, writtenBackend(t, h), tc.written, out.Message, log)
			}
			said := log + out.Message
			check.Says(t, "output", said, "backend: iptables-nft in /etc/rke2-proxy-backend/config.yaml asks for iptables-nft, which cannot run on this host: the kernel has no nf_tables")
			if !strings.Contains(said, "nf_tables") || !strings.Contains(said, "iptables-legacy") {
				t.Errorf("the refusal names neither the missing nf_tables nor the backend that works:\n%s", said)
			}
		})
	}
}

// No backend runs: only then does warn remove our drop-in and let RKE2
// start on its own defaults, said loudly; block keeps RKE2 down. The plan
// says nothing was applied, and why.
func TestPrepareNoBackendRuns(t *testing.T) {
	for _, tc := range []struct {
		onFailure string
		verdict   Verdict
	}{{config.OnFailureWarn, Warned}, {config.OnFailureBlock, Blocked}} {
		t.Run(tc.onFailure, func(t *testing.T) {
			h := debianHost(t)
			old, err := dropin.Render(rke2.DropIn{Backend: backend.IptablesNFT, KubeProxyEnv: []string{"IPTABLES_MODE=nft"}})
			if err != nil {
				t.Fatal(err)
			}
			h.File(dropInPath, string(old))
			ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true, backend.IptablesLegacy: true, backend.NFTables: true}}
			out, log := prepare(t, h, ft, "", func(c *config.Config) { c.OnFailure = tc.onFailure })
			if out.Verdict != tc.verdict || writtenBackend(t, h) != "" {
				t.Fatalf("verdict %d (want %d), drop-in %q\n%s", out.Verdict, tc.verdict, writtenBackend(t, h), log)
			}
			said := log + out.Message
			// nftables is no candidate here: the Kubernetes version is unknown
			check.Says(t, "output", said, "no backend can run on this host (iptables-nft: Couldn't load", "; iptables-legacy: Couldn't load")
			if tc.verdict == Warned {
				check.Says(t, "log", log, "warning: cannot honour the plan (on_failure: warn, RKE2 starts with its own defaults): no backend can run on this host")
			}
			p, err := plan.Read(h.Root())
			if err != nil {
				t.Fatal(err)
			}
			if p.AppliedBackend() != "" || !strings.Contains(p.Applied.Nothing, "no backend can run on this host") || !strings.Contains(p.Applied.Nothing, "RKE2 starts with its own defaults") {
				t.Errorf("plan applied %+v", p.Applied)
			}
			msg, _, _ := journalEntry(p, out.Result.Problems)
			check.Says(t, "journal", msg, "rke2-proxy-backend gave RKE2 no backend: no backend can run on this host")
		})
	}
}

// The kernel cannot run the backend once its modules are loaded (modprobe
// fails for nf_tables although the module tree lists it): the automatic
// choice falls forward there too, without a trial (none runs under
// --root), and the new backend's modules are loaded in its turn.
func TestPrepareFallsForwardWhenModulesDoNotLoad(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Config("config.yaml", operatorConfig)
	h.AvailableModules("nf_tables", "nft_compat", "nft_chain_nat", "ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle",
		"ip6_tables", "ip6table_filter", "ip6table_nat", "ip6table_mangle")
	h.KernelConfig(map[string]string{"NF_TABLES": "m", "NFT_COMPAT": "m", "IP_NF_IPTABLES": "m", "NETFILTER_XTABLES": "m"})
	h.LoadedModules("virtio_net") // nf_tables not loaded yet
	kmodtest.Install(t, h.Dir(), h.Release())
	kmodtest.InstallScript(t, h.Dir(), "#!/bin/sh\n[ \"$1\" = -- ] && shift\ncase $1 in nf_tables|nft_*) echo \"modprobe: ERROR: could not insert '$1': Exec format error\" >&2; exit 1;; esac\n"+
		"echo \"$1 16384 0 - Live 0x0\" >> \"$(dirname \"$0\")/../proc/modules\"\n")
	in := probed(h)
	var log bytes.Buffer
	o := PrepareOptions{Root: h.Root(), Forced: in.Decision.Backend, Stdout: io.Discard, Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
	if in.Decision.Backend != backend.IptablesNFT {
		t.Fatalf("fixture: decided %s, want iptables-nft", in.Decision.Backend)
	}
	out, err := Prepare(context.Background(), o, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != Honoured || writtenBackend(t, h) != string(backend.IptablesLegacy) {
		t.Fatalf("verdict %d, drop-in %q, problems %q\n%s", out.Verdict, writtenBackend(t, h), out.Result.Problems, log.String())
	}
	check.Says(t, "log", log.String(), "[failed]   iptables-nft cannot run on this host: iptables-nft: kernel 6.1.0-18-amd64 lacks nf_tables",
		"iptables-nft, the generator's plan (apply --backend), cannot run on this host: falling forward",
		"backend iptables-legacy (source auto)", "[finished] loading kernel module iptable_nat")
	p, err := plan.Read(h.Root())
	if err != nil || p.AppliedBackend() != backend.IptablesLegacy || len(p.Refused) != 1 || !strings.Contains(p.Refused[0].Why, "lacks nf_tables") {
		t.Errorf("plan %+v, %v", p, err)
	}
}

// An RKE2_CONFIG_FILE that cannot be read is Prepare's error (cli's exit
// 2), before any trial: the operator's intent is unknown.
func TestPrepareUnreadableRKE2ConfigFileIsAnError(t *testing.T) {
	const moved = "/etc/rke2-elsewhere/config.yaml"
	h := debianHost(t).File(moved, "kube-proxy-arg: [unclosed\n")
	ft := &fakeTrial{}
	o := PrepareOptions{Root: h.Root(), ConfigEnv: moved, TrialUnderRoot: true, Trial: ft.trial}
	_, err := Prepare(context.Background(), o, probed(h))
	if err == nil || !strings.HasPrefix(err.Error(), "RKE2_CONFIG_FILE="+moved+": ") || len(ft.asked) != 0 {
		t.Errorf("Prepare error %v after trials %v; want one naming RKE2_CONFIG_FILE and no trial", err, ft.asked)
	}
}

// Issue 30's NAS node end to end, with the real trial: the generator
// planned iptables-nft automatically, the kernel rejects it (the real
// loader's own failure), apply falls forward to iptables-legacy, proves it
// in a real namespace, writes it and records the truth, for either
// on_failure.
func TestPrepareRealTrialFallsForwardOnTheNASKernel(t *testing.T) {
	withoutNFTablesLoaders(t)
	for _, onFailure := range []string{config.OnFailureWarn, config.OnFailureBlock} {
		t.Run(onFailure, func(t *testing.T) {
			h := debianHost(t)
			in := probed(h)
			in.Config.OnFailure = onFailure
			var log bytes.Buffer
			o := PrepareOptions{Root: h.Root(), Forced: backend.IptablesNFT, TrialUnderRoot: true, Stdout: io.Discard,
				Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
			out, err := Prepare(context.Background(), o, in)
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != Honoured || writtenBackend(t, h) != string(backend.IptablesLegacy) {
				t.Fatalf("verdict %d, drop-in %q, problems %q\n%s", out.Verdict, writtenBackend(t, h), out.Result.Problems, log.String())
			}
			check.Says(t, "log", log.String(), "[failed]   trial of iptables-nft: ", "Could not fetch rule set generation id: Invalid argument",
				"trial of iptables-legacy: kube-proxy's rules for one service loaded in a throwaway network namespace", "backend iptables-legacy (source auto)")
			p, err := plan.Read(h.Root())
			if err != nil || p.AppliedBackend() != backend.IptablesLegacy || len(p.Refused) != 1 || !strings.Contains(p.Refused[0].Why, "Could not fetch rule set generation id") {
				t.Errorf("plan %+v, %v", p, err)
			}
		})
	}
}
