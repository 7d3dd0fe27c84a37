package apply

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const leftoverGate = "feature-gates=NFTablesProxyMode=true"

// applyOn runs Prepare as apply does at ExecStartPre (the RKE2 binary
// asked for its version) with on_failure set, the trial faked to pass.
func applyOn(t *testing.T, h *testhost.Host, onFailure string) (Outcome, string) {
	t.Helper()
	f := facts.Probe(h.Root(), facts.Options{RKE2Binary: true})
	c := config.Defaults()
	c.OnFailure = onFailure
	in := Input{Facts: f, Config: c, Decision: decide.Decide(f, c)}
	var out, log bytes.Buffer
	o := PrepareOptions{Root: h.Root(), TrialUnderRoot: true, Trial: (&fakeTrial{}).trial, Stdout: &out,
		Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
	res, err := Prepare(context.Background(), o, in)
	if err != nil {
		t.Fatal(err)
	}
	return res, log.String()
}

func readHostFile(t *testing.T, h *testhost.Host, p string) string {
	t.Helper()
	b, err := os.ReadFile(h.Root().Path(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A node upgraded to RKE2 v1.38 (its binary answers v1.38.0, the data
// directory still holds v1.37) whose operator config still passes
// feature-gates=NFTablesProxyMode=true: apply names the file, line and item
// before RKE2 starts, leaves the file alone, and on_failure decides.
func TestApplyNamesARefusedGateBeforeRKE2Starts(t *testing.T) {
	for _, tc := range []struct {
		name, onFailure string
		verdict         Verdict
		where           string
		host            func(*testhost.Host)
	}{
		{"block, config.yaml", config.OnFailureBlock, Blocked, "/etc/rancher/rke2/config.yaml line 2", func(h *testhost.Host) {
			h.KubeProxyArgs("config.yaml", false, leftoverGate)
		}},
		{"warn, config.yaml", config.OnFailureWarn, Warned, "/etc/rancher/rke2/config.yaml line 2", func(h *testhost.Host) {
			h.KubeProxyArgs("config.yaml", false, leftoverGate)
		}},
		{"block, config.yaml.d", config.OnFailureBlock, Blocked, "/etc/rancher/rke2/config.yaml.d/50-rancher.yaml line 2", func(h *testhost.Host) {
			h.KubeProxyArgs("config.yaml.d/50-rancher.yaml", true, "v=2", leftoverGate)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.37.2+rke2r1").RKE2UpgradedTo("v1.38.0+rke2r1")
			tc.host(h)
			file := strings.Fields(tc.where)[0]
			before := readHostFile(t, h, file)
			out, log := applyOn(t, h, tc.onFailure)
			if out.Verdict != tc.verdict {
				t.Fatalf("verdict %v (%s), want %v; log:\n%s", out.Verdict, out.Message, tc.verdict, log)
			}
			warning := "warning: kube-proxy v1.38.0 will not start: " + tc.where + `, kube-proxy-arg "` + leftoverGate + `"`
			at := strings.Index(log, warning)
			if at < 0 {
				t.Fatalf("log lacks %q:\n%s", warning, log)
			}
			if w := strings.Index(log, "[started]  writing"); w >= 0 && w < at {
				t.Errorf("the finding is logged after apply started writing:\n%s", log)
			}
			if tc.verdict == Blocked && !strings.Contains(out.Message, "on_failure: block, RKE2 will not start") || !strings.Contains(out.Message+log, "removed the feature gate NFTablesProxyMode") {
				t.Errorf("message %q / log do not say why", out.Message)
			}
			if after := readHostFile(t, h, file); after != before {
				t.Errorf("apply changed the operator's %s:\n%s", file, after)
			}
			if p := readHostFile(t, h, "/run/rke2-proxy-backend/plan.json"); !strings.Contains(p, "will not start: "+tc.where) {
				t.Errorf("plan.json does not record the finding in its warnings:\n%s", p)
			}
			if tc.verdict == Warned && writtenBackend(t, h) == "" {
				t.Error("on_failure: warn wrote no drop-in")
			}
		})
	}
}

// Kubernetes 1.37 accepts the gate (GA, locked to true): apply goes ahead,
// noting that the setting changes nothing.
func TestApplyOn137KeepsGoing(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.37.2+rke2r1").KubeProxyArgs("config.yaml", false, leftoverGate)
	out, log := applyOn(t, h, config.OnFailureBlock)
	if out.Verdict != Honoured || strings.Contains(log, "will not start") {
		t.Errorf("verdict %v (%s); log:\n%s", out.Verdict, out.Message, log)
	}
	if !strings.Contains(log, "Note: kube-proxy v1.37.2 ignores a setting") {
		t.Errorf("log lacks the note:\n%s", log)
	}
}
