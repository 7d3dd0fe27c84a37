package apply

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The generator's plan that the facts apply reads now rule out (no
// nf_tables on this kernel) is refused like a failed trial, and the
// automatic choice falls forward to the decision made now: no problem,
// nothing for on_failure.
func TestChooserGeneratorsPlanTheFactsRuleOut(t *testing.T) {
	h := testhost.New(t).Synology44()
	in := probed(h)
	var log strings.Builder
	c := newChooser(PrepareOptions{Forced: backend.NFTables, Log: func(f string, a ...any) { log.WriteString(f + "\n") }}, in.Facts, in.Config, in.Decision)
	d, problems := c.prove(context.Background(), c.first(in.Decision))
	if d.Backend != backend.IptablesLegacy || len(problems) != 0 {
		t.Fatalf("chose %s, problems %q", d.Backend, problems)
	}
	if len(c.refused) != 1 || c.refused[0].Backend != backend.NFTables || c.refused[0].Plan != decide.ForcedBy || c.refused[0].Explicit {
		t.Errorf("refused %+v", c.refused)
	}
	if !strings.HasPrefix(d.Reasons[0], "nftables, the generator's plan (apply --backend), cannot run on this host (") {
		t.Errorf("reasons %q do not open with the fall forward", d.Reasons)
	}
	for _, r := range d.Reasons {
		if strings.Contains(r, "keeps the backend planned at boot") {
			t.Errorf("a refused plan is said to be kept: %q", r)
		}
	}
}

// The generator's plan that the host can run is carried out even when a
// fresh decision would pick another (a daemon-reload re-runs the
// generator; apply does not flip the node behind its back).
func TestChooserKeepsTheGeneratorsPlanTheHostCanRun(t *testing.T) {
	h := testhost.New(t).Debian12()
	in := probed(h)
	if in.Decision.Backend != backend.IptablesNFT {
		t.Fatalf("fixture decided %s", in.Decision.Backend)
	}
	c := newChooser(PrepareOptions{Forced: backend.IptablesLegacy}, in.Facts, in.Config, in.Decision)
	d, problems := c.prove(context.Background(), c.first(in.Decision))
	if d.Backend != backend.IptablesLegacy || len(problems) != 0 || len(c.refused) != 0 {
		t.Fatalf("chose %s, problems %q, refused %+v", d.Backend, problems, c.refused)
	}
	if !strings.HasPrefix(d.Reasons[0], "A fresh decision would pick iptables-nft") {
		t.Errorf("reasons %q", d.Reasons)
	}
}

// RKE2's own pin is the operator's explicit backend too. decide keeps it
// whatever the kernel says, so once its trial fails the backend that
// works is decided without it, and on_failure weighs the replacement.
func TestChooserRKE2PinTheTrialRejects(t *testing.T) {
	for _, onFailure := range []string{config.OnFailureWarn, config.OnFailureBlock} {
		t.Run(onFailure, func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2Config("config.yaml", "kube-proxy-extra-env:\n  - IPTABLES_MODE=nft\n")
			in := probed(h)
			in.Config.OnFailure = onFailure
			if in.Decision.Source != decide.SourceRKE2Config || in.Decision.Backend != backend.IptablesNFT {
				t.Fatalf("fixture decided %s (source %s)", in.Decision.Backend, in.Decision.Source)
			}
			ft := &fakeTrial{reject: map[backend.Backend]bool{backend.IptablesNFT: true}}
			c := newChooser(PrepareOptions{Trial: ft.trial}, in.Facts, in.Config, in.Decision)
			c.trials = true
			d, problems := c.prove(context.Background(), c.first(in.Decision))
			if want := []backend.Backend{backend.IptablesNFT, backend.IptablesLegacy}; !reflect.DeepEqual(ft.asked, want) {
				t.Fatalf("trials %v, want %v", ft.asked, want)
			}
			if d.Backend != backend.IptablesLegacy || len(c.refused) != 1 || !c.refused[0].Explicit {
				t.Fatalf("chose %s, refused %+v", d.Backend, c.refused)
			}
			if onFailure == config.OnFailureBlock {
				if len(problems) != 1 {
					t.Fatalf("problems %q, want one naming the backend that would work", problems)
				}
				check.Says(t, "problem", problems[0], "RKE2's own config (", "asks for iptables-nft, which cannot run on this host: Couldn't load match", "iptables-legacy would work (its trial passed)")
				return
			}
			if len(problems) != 0 {
				t.Fatalf("problems %q under warn", problems)
			}
			check.Says(t, "warning", c.explicitWarning(d.Backend), "RKE2's own config (", "RKE2 starts on iptables-legacy instead (its trial passed), as on_failure: warn allows")
		})
	}
}
