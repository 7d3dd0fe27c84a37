package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSubcommandPlaysOnlyRKE2sUnits(t *testing.T) {
	for _, args := range [][]string{{"server"}, {"agent", "--debug"}} {
		if role, err := subcommand(args); err != nil || role != args[0] {
			t.Errorf("subcommand(%q) = %q, %v; want %q", args, role, err, args[0])
		}
	}
	for _, args := range [][]string{nil, {"etcd-snapshot"}, {"--debug", "server"}} {
		if role, err := subcommand(args); err == nil {
			t.Errorf("subcommand(%q) = %q, want an error", args, role)
		}
	}
}

func TestAgentJoinNeedsServerAndToken(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "token")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(full, []byte("K10abc::server:xyz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "https://rke2.example.internal:9345"
	for _, c := range []struct {
		values map[string]any
		err    string // "" when the agent may start
	}{
		{map[string]any{"server": url, "token-file": full}, ""},
		{map[string]any{"server": url, "token": "K10abc"}, ""},
		{map[string]any{"token": "K10abc"}, "no server:"},
		{map[string]any{"server": url}, "neither token"},
		{map[string]any{"server": url, "token-file": empty}, "missing or empty"},
		{map[string]any{"server": url, "token-file": filepath.Join(dir, "absent")}, "missing or empty"},
	} {
		err := agentJoin(c.values)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("agentJoin(%v) = %v, want nil", c.values, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("agentJoin(%v) = %v, want an error with %q", c.values, err, c.err)
		}
	}
}

// kube-proxy's metrics server listens where its last metrics-bind-address
// says, as the real one does (packaging/test/metrics-address.sh).
func TestMetricsAddressFollowsKubeProxyArg(t *testing.T) {
	for want, args := range map[string][]any{
		"127.0.0.1:10249": nil,
		"127.0.0.2:10259": {"proxy-mode=iptables", "--metrics-bind-address=0.0.0.0:10249", "metrics-bind-address=127.0.0.2:10259"},
		"0.0.0.0:10249":   {"metrics-bind-address=0.0.0.0"},
	} {
		if got := metricsAddress(map[string]any{"kube-proxy-arg": args}); got != want {
			t.Errorf("kube-proxy-arg %q: listens on %s, want %s", args, got, want)
		}
	}
}

// kubelet's iptables chains failing (the host's nft alternative on a
// kernel without nf_tables: iptables exits 4) is logged and recorded, as
// the real kubelet logs it, and RKE2 goes on; before, the stand-in's
// RKE2 exited and a NAS guest never started.
func TestKubeletFailureDoesNotStopRKE2(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "kubeproxy-oracle")
	script := "#!/bin/sh\necho 'iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Invalid argument' >&2\nexit 4\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	oldOracle, oldDir := oracle, recordDir
	oracle, recordDir = fake, dir
	t.Cleanup(func() { oracle, recordDir = oldOracle, oldDir })
	if err := kubelet(); err != nil {
		t.Fatalf("kubelet: %v, want nil (kubelet logs and carries on)", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "kubelet-failed"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Failed to initialize iptables rules; some functionality may be missing.", "Could not fetch rule set generation id"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("kubelet-failed %q lacks %q", got, want)
		}
	}
}
