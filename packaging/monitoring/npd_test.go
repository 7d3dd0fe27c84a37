package monitoring

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
)

// The structs below mirror node-problem-detector's custom plugin monitor
// config as its own code decodes it, from kubernetes/node-problem-detector
// at commit 6632ca67148f7a23df9cdbd98d9e89b388561a3a:
//   - pkg/custompluginmonitor/types/config.go: CustomPluginConfig, pluginGlobalConfig
//   - pkg/custompluginmonitor/types/types.go: CustomRule
//   - pkg/types/types.go: Condition, Type ("temporary", "permanent")
//
// NPD itself decodes leniently (an unknown key is silently dropped, so a
// misspelt "invoke_intervall" would quietly run at the default); decoding
// strictly here turns such a typo into a test failure.
type npdConfig struct {
	Plugin       string          `json:"plugin"`
	PluginConfig npdGlobalConfig `json:"pluginConfig"`
	Source       string          `json:"source"`
	Conditions   []npdCondition  `json:"conditions"`
	Rules        []npdRule       `json:"rules"`
	Metrics      *bool           `json:"metricsReporting"`
}

type npdGlobalConfig struct {
	InvokeInterval       *string `json:"invoke_interval"`
	Timeout              *string `json:"timeout"`
	MaxOutputLength      *int    `json:"max_output_length"`
	Concurrency          *int    `json:"concurrency"`
	MessageChangeUpdates *bool   `json:"enable_message_change_based_condition_update"`
	SkipInitialStatus    *bool   `json:"skip_initial_status"`
}

type npdCondition struct {
	Type       string     `json:"type"`
	Status     string     `json:"status"`
	Transition *time.Time `json:"transition"`
	Reason     string     `json:"reason"`
	Message    string     `json:"message"`
}

type npdRule struct {
	Type           string   `json:"type"`
	Condition      string   `json:"condition"`
	Reason         string   `json:"reason"`
	Path           string   `json:"path"`
	Args           []string `json:"args"`
	Timeout        *string  `json:"timeout"`
	InvokeInterval *string  `json:"invoke_interval"`
}

const npdConfigFile = "node-problem-detector/rke2-proxy-backend.json"

// The node condition operators select on (kubectl get nodes -o
// jsonpath, alert rules on kube-state-metrics' kube_node_status_condition).
const (
	conditionType = "KubeProxyBackendProblem"
	okReason      = "KubeProxyBackendOK"
	problemReason = "KubeProxyBackendVerifyFailed"
)

func loadNPDConfig(t *testing.T) npdConfig {
	t.Helper()
	data, err := os.ReadFile(npdConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c npdConfig
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: not a node-problem-detector custom plugin config: %v", npdConfigFile, err)
	}
	if dec.More() {
		t.Fatalf("%s: trailing data after the JSON object", npdConfigFile)
	}
	return c
}

func duration(t *testing.T, what string, s *string) time.Duration {
	t.Helper()
	if s == nil {
		t.Fatalf("%s: %s is not set; set it explicitly rather than rely on NPD's default", npdConfigFile, what)
	}
	d, err := time.ParseDuration(*s)
	if err != nil || d <= 0 {
		t.Fatalf("%s: %s %q is not a positive duration (NPD refuses it): %v", npdConfigFile, what, *s, err)
	}
	return d
}

// TestNPDConfigPassesNPDsOwnValidation repeats CustomPluginConfig.Validate's
// checks (config.go) and ours: the rule runs the installed binary's check
// subcommand, and the message check prints fits max_output_length.
func TestNPDConfigPassesNPDsOwnValidation(t *testing.T) {
	c := loadNPDConfig(t)
	if c.Plugin != "custom" {
		t.Errorf("plugin %q: NPD supports only \"custom\"", c.Plugin)
	}
	if c.Source == "" {
		t.Error("source is empty: NPD names events and conditions' source by it")
	}
	global := duration(t, "pluginConfig.timeout", c.PluginConfig.Timeout)
	interval := duration(t, "pluginConfig.invoke_interval", c.PluginConfig.InvokeInterval)
	if global >= interval {
		t.Errorf("timeout %s >= invoke_interval %s: runs would overlap", global, interval)
	}
	if m := c.PluginConfig.MaxOutputLength; m == nil || *m < proof.MaxMessage {
		t.Errorf("max_output_length must be set to at least proof.MaxMessage (%d): NPD cuts longer output mid-word", proof.MaxMessage)
	}
	if len(c.Conditions) != 1 || c.Conditions[0].Type != conditionType || c.Conditions[0].Reason != okReason || c.Conditions[0].Message == "" {
		t.Errorf("conditions = %+v; want one %s with reason %s and a message", c.Conditions, conditionType, okReason)
	}
	if len(c.Rules) != 1 {
		t.Fatalf("rules = %+v; want exactly one", c.Rules)
	}
	r := c.Rules[0]
	if r.Type != "permanent" || r.Condition != conditionType || r.Reason != problemReason {
		t.Errorf("rule = type %q condition %q reason %q; want permanent %s %s (a permanent rule needs its preset condition)",
			r.Type, r.Condition, r.Reason, conditionType, problemReason)
	}
	if ruleTimeout := duration(t, "rules[0].timeout", r.Timeout); ruleTimeout > global {
		t.Errorf("rule timeout %s exceeds the global timeout %s: NPD refuses the config", ruleTimeout, global)
	}
	if r.Path != hostfs.Binary {
		t.Errorf("rule path %q; want the installed binary %s (packaging/nfpm.yaml)", r.Path, hostfs.Binary)
	}
	root := cli.NewRootCommand(io.Discard, io.Discard)
	cmd, rest, err := root.Find(r.Args)
	if err != nil || cmd.Name() != "check" || len(r.Args) == 0 || r.Args[0] != "check" || !slices.Equal(rest, r.Args[1:]) {
		t.Fatalf("rule args %q do not run the check subcommand (found %q, rest %q, %v)", r.Args, cmd.Name(), rest, err)
	}
	// The age limit must be a flag check knows, and loose enough that a
	// live watch (one heartbeat every hostfs.WatchHeartbeatEvery) is never
	// called stale between two of NPD's runs.
	if err := cmd.ParseFlags(r.Args[1:]); err != nil || cmd.Flags().NArg() != 0 {
		t.Fatalf("rule args %q: check refuses them: %v", r.Args, err)
	}
	maxAge, err := cmd.Flags().GetDuration("max-age")
	if err != nil {
		t.Fatal(err)
	}
	if !cmd.Flags().Changed("max-age") {
		t.Errorf("rule args %q: set --max-age explicitly, so the node's limit is read in the config", r.Args)
	}
	if maxAge < 2*hostfs.WatchHeartbeatEvery+interval {
		t.Errorf("--max-age %s is under two heartbeats (%s each) plus NPD's interval %s: a live watch would flap to unknown", maxAge, hostfs.WatchHeartbeatEvery, interval)
	}
}

func TestNPDConfigIsStrictlyDecoded(t *testing.T) {
	// The strict decoder must fail on a key NPD does not know, or the test
	// above proves nothing about typos.
	dec := json.NewDecoder(bytes.NewReader([]byte(`{"plugin":"custom","pluginConfig":{"invoke_intervall":"30s"}}`)))
	dec.DisallowUnknownFields()
	var c npdConfig
	if err := dec.Decode(&c); err == nil {
		t.Fatal("a misspelt pluginConfig key decoded without error")
	}
}
