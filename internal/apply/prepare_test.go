package apply

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// fakeTrial rejects the backends in reject (with a complaint like
// iptables-nft-restore's on EL10) and records every backend it was asked
// to prove: the seam that lets the re-decide loop run without root.
type fakeTrial struct {
	reject map[backend.Backend]bool
	asked  []backend.Backend
}

func (ft *fakeTrial) trial(_ context.Context, b backend.Backend, _ rke2.KubeVersion) TrialResult {
	ft.asked = append(ft.asked, b)
	if ft.reject[b] {
		return TrialResult{Backend: b, Failure: "Couldn't load match `statistic':No such file or directory (at line 3: -m statistic)"}
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

// An operator override the kernel rejects is refused with what failed
// (a warning in the plan, not a problem), and the fresh decision is proved
// in its turn.
func TestPrepareRefusesAnOverrideTheTrialRejects(t *testing.T) {
	h := debianHost(t)
	ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
	out, log := prepare(t, h, ft, "", func(c *config.Config) { c.Backend, c.BackendSource = "iptables-nft", "env" })
	if want := []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy}; !reflect.DeepEqual(ft.asked, want) {
		t.Fatalf("trials %v, want %v\n%s", ft.asked, want, log)
	}
	d := out.Input.Decision
	if out.Verdict != Honoured || d.Backend != backend.IptablesLegacy || len(d.Refused) != 1 || !strings.Contains(d.Refused[0], "Couldn't load match `statistic'") {
		t.Fatalf("verdict %d, backend %s, refused %q\n%s", out.Verdict, d.Backend, d.Refused, log)
	}
	if !reflect.DeepEqual(out.Result.Plan.Warnings, d.Refused) {
		t.Errorf("plan warnings %q, want the refusal %q", out.Result.Plan.Warnings, d.Refused)
	}
	if got := writtenBackend(t, h); got != string(backend.IptablesLegacy) {
		t.Errorf("drop-in for %q, want iptables-legacy", got)
	}
}

// The generator's plan (--backend) that the kernel rejects is not swapped
// for another: it is a problem, tried once, and on_failure decides whether
// RKE2 starts (warn: on its own defaults, without our drop-in) or not.
// --dry-run weighs the same problems by on_failure and gives the exit a
// real run would, in the conditional, and writes nothing.
func TestPrepareGeneratorPlanTheTrialRejects(t *testing.T) {
	for _, tc := range []struct {
		onFailure     string
		verdict       Verdict
		says, drySays string
	}{
		{config.OnFailureWarn, Warned,
			"warning: cannot honour the plan (on_failure: warn, RKE2 starts with its own defaults): ",
			"warning: a real run could not honour the plan (on_failure: warn, RKE2 would start with its own defaults): "},
		{config.OnFailureBlock, Blocked,
			"apply: cannot honour the plan (on_failure: block, RKE2 will not start): ",
			"apply --dry-run: a real run could not honour the plan (on_failure: block, RKE2 would not start): "},
	} {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dry-run=%t", tc.onFailure, dry), func(t *testing.T) {
				h := debianHost(t)
				ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
				out, log := prepareRun(t, h, ft, backend.IptablesNFT, func(c *config.Config) { c.OnFailure = tc.onFailure }, dry)
				if want := []backend.Backend{backend.IptablesNFT}; !dry && !reflect.DeepEqual(ft.asked, want) {
					t.Fatalf("trials %v, want %v: the plan is tried, not replaced\n%s", ft.asked, want, log)
				}
				if !dry && (out.Verdict != tc.verdict || len(out.Result.Problems) == 0 ||
					!strings.Contains(strings.Join(out.Result.Problems, " "), "Couldn't load match `statistic'")) {
					t.Fatalf("verdict %d (want %d), problems %q\n%s", out.Verdict, tc.verdict, out.Result.Problems, log)
				}
				said, says := log, tc.says
				if dry {
					says = tc.drySays
				}
				if tc.verdict == Blocked {
					said = out.Message
				} else if out.Message != "" && !dry {
					t.Errorf("a warned run has a failure message %q", out.Message)
				}
				if out.Verdict != tc.verdict || !strings.Contains(said, says) {
					t.Fatalf("verdict %d (want %d); %q lacks %q", out.Verdict, tc.verdict, said, says)
				}
				if got := writtenBackend(t, h); got != "" {
					t.Errorf("a drop-in for %s was written (dry run %t) for a plan the kernel rejected", got, dry)
				}
			})
		}
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
