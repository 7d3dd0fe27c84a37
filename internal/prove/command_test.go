package prove

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// The config's verify.wait and verify.textfile_dir count unless the flag
// was given; --proxy-mode-url replaces RKE2's endpoint, "" skipping it.
func TestLoadResolvesFlagsAgainstTheConfig(t *testing.T) {
	h := testhost.New(t).File(hostfs.ConfigFile, "verify:\n  wait: 42s\n  textfile_dir: /srv/textfile\n")
	c, err := Load(h.Root(), hostfs.ConfigFile, Flags{Wait: time.Second, TextfileDir: "/ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Wait != 42*time.Second || c.TextfileDir != "/srv/textfile" || c.ProxyMode != nil {
		t.Errorf("without the flags: wait %s, textfile dir %q, endpoint %+v; want the config's and RKE2's", c.Wait, c.TextfileDir, c.ProxyMode)
	}
	c, err = Load(h.Root(), hostfs.ConfigFile, Flags{Wait: time.Second, WaitSet: true, TextfileDir: "", TextfileDirSet: true,
		ProxyModeURL: "http://127.0.0.1:10249/proxyMode", ProxyModeURLSet: true, NoStatus: true, Claim: verify.Claim{Backend: "nftables"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Wait != time.Second || c.TextfileDir != "" || !c.NoStatus || c.Claim.Backend != "nftables" ||
		c.ProxyMode == nil || c.ProxyMode.URL != "http://127.0.0.1:10249/proxyMode" || c.ProxyMode.Source != "--proxy-mode-url" {
		t.Errorf("with the flags: %+v, endpoint %+v; want the flags' values", c, c.ProxyMode)
	}
	c, err = Load(h.Root(), hostfs.ConfigFile, Flags{ProxyModeURLSet: true})
	if err != nil || c.ProxyMode == nil || c.ProxyMode.URL != "" || c.ProxyMode.Source != "" {
		t.Errorf("--proxy-mode-url= : %+v, %v; want the check skipped without a note", c.ProxyMode, err)
	}
}

func TestLoadRefusesWhatCannotRun(t *testing.T) {
	root := testhost.New(t).File(hostfs.ConfigFile, "verify:\n  wiat: 5m\n").Root()
	if _, err := Load(root, hostfs.ConfigFile, Flags{}); err == nil || !strings.Contains(err.Error(), "wiat") {
		t.Errorf("a config with an unknown key: %v; want the key named", err)
	}
	root = testhost.New(t).Root()
	for _, c := range []struct {
		f    Flags
		want string
	}{
		{Flags{Wait: -time.Second, WaitSet: true}, "--wait -1s: must not be negative"},
		{Flags{ProxyModeURL: "http://10.0.0.1:10249/proxyMode", ProxyModeURLSet: true}, "--proxy-mode-url: "},
	} {
		if _, err := Load(root, hostfs.ConfigFile, c.f); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.f, err, c.want)
		}
	}
}

func TestLoadTakesNodeFeatureFileFromTheConfig(t *testing.T) {
	for text, want := range map[string]bool{"": true, "verify:\n  node_feature_file: false\n": false} {
		c, err := Load(testhost.New(t).File(hostfs.ConfigFile, text).Root(), hostfs.ConfigFile, Flags{})
		if err != nil || c.NodeFeatures != want {
			t.Errorf("config %q: %v, NodeFeatures %v; want %v", text, err, c != nil && c.NodeFeatures, want)
		}
	}
}

func status(t *testing.T, root hostfs.Root) *verify.Result {
	t.Helper()
	data, err := root.ReadFile(hostfs.StatusFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var r verify.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", hostfs.StatusFile, err)
	}
	return &r
}

// Once stores every result, "cannot tell" included, and a run without one
// invalidates the last; a bad claim, a tool turned off or --no-status
// store nothing.
func TestOnceKeepsTheStatusTrue(t *testing.T) {
	h := testhost.New(t)
	c := &Command{Host: verify.Host{Root: h.Root()}}
	res, err := c.Once(context.Background())
	if err != nil || res.Verdict != verify.VerdictUnknown {
		t.Fatalf("no plan: %+v, %v; want cannot tell", res, err)
	}
	if st := status(t, h.Root()); st == nil || st.Verdict != verify.VerdictUnknown {
		t.Fatalf("status after cannot tell: %+v", st)
	}

	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT}, Kubernetes: "one point thirty"})
	if _, err := c.Once(context.Background()); err == nil || !strings.Contains(err.Error(), "kubernetes") {
		t.Fatalf("a plan whose Kubernetes does not parse: %v; want the error", err)
	}
	if st := status(t, h.Root()); st == nil || st.Verdict != proof.VerdictInvalid || !strings.HasPrefix(st.Invalid, "verify could not run: plan ") {
		t.Fatalf("status after a run without a result: %+v; want it invalid, saying why", st)
	}

	badPlan := func() hostfs.Root {
		return writePlan(t, testhost.New(t).Root(), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT}, Kubernetes: "one point thirty"})
	}
	for name, c := range map[string]*Command{
		"--no-status":  {Host: verify.Host{Root: badPlan()}, NoStatus: true},
		"--expect bad": {Host: verify.Host{Root: badPlan(), Claim: verify.Claim{Backend: "modern"}}},
		"backend: off": {Host: verify.Host{Root: writePlan(t, testhost.New(t).Root(), plan.Plan{Decision: plan.Decision{Disabled: true}})}},
	} {
		_, err := c.Once(context.Background())
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if st := status(t, c.Root); st != nil {
			t.Errorf("%s: stored %+v; want nothing", name, st)
		}
	}
}

// Each run of a command reads the host again (watch runs for days).
func TestVerifyReadsThePlanAtEveryRun(t *testing.T) {
	h := testhost.New(t)
	c := &Command{Host: verify.Host{Root: h.Root()}}
	if res, err := c.Verify(context.Background(), 0, nil); err != nil || res.Verdict != verify.VerdictUnknown {
		t.Fatalf("no plan: %+v, %v", res, err)
	}
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Disabled: true}})
	if _, err := c.Verify(context.Background(), 0, nil); !errors.Is(err, verify.ErrOff) {
		t.Fatalf("after the plan turned the tool off: %v; want ErrOff", err)
	}
}
