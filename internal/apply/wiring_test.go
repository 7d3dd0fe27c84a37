package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

func TestRKE2UnitOf(t *testing.T) {
	check.Table(t, "RKE2UnitOf", RKE2UnitOf, map[string]string{
		"0::/system.slice/rke2-server.service\n":                                                      "rke2-server.service",
		"12:pids:/system.slice/rke2-agent.service\n1:name=systemd:/system.slice/rke2-agent.service\n": "rke2-agent.service",
		"0::/system.slice/cloud-final.service\n":                                                      "",
		"0::/user.slice/user-0.slice/session-1.scope\n":                                               "",
		"0::/system.slice/rke2-server.service.d\n":                                                    "",
		"": "",
	})
}

// FuzzRKE2UnitOf: whatever the cgroup text, the answer is no unit or one of
// RKE2's two, and then some line of the text ends in "/<that unit>": a
// process is never taken for RKE2's ExecStartPre on a partial match.
func FuzzRKE2UnitOf(f *testing.F) {
	f.Add("0::/system.slice/rke2-server.service\n")
	f.Add("1:name=systemd:/system.slice/rke2-agent.service")
	f.Add("0::/system.slice/xrke2-server.service\n0::/rke2-server.service.d")
	f.Fuzz(func(t *testing.T, cgroup string) {
		u := RKE2UnitOf(cgroup)
		if u == "" {
			return
		}
		if u != "rke2-server.service" && u != "rke2-agent.service" {
			t.Fatalf("RKE2UnitOf(%q) = %q", cgroup, u)
		}
		found := false
		for _, line := range strings.Split(cgroup, "\n") {
			found = found || strings.HasSuffix(strings.TrimSuffix(line, "\r"), "/"+u)
		}
		if !found {
			t.Fatalf("RKE2UnitOf(%q) = %q, but no line ends in /%s", cgroup, u, u)
		}
	})
}

// CompleteWiring asks for a start that does not block: a blocking start
// of a unit ordered after the one whose ExecStartPre runs would wait for
// itself.
func TestCompleteWiringQueuesVerifyWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	sctl := filepath.Join(dir, "systemctl")
	if err := os.WriteFile(sctl, []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log []string
	if err := CompleteWiring(context.Background(), sctl, func(f string, a ...any) { log = append(log, f) }); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(calls)
	if string(got) != "start --no-block rke2-proxy-backend-verify.service\n" {
		t.Errorf("systemctl called with %q", got)
	}
	if err := os.WriteFile(sctl, []byte("#!/bin/sh\necho no bus >&2; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := CompleteWiring(context.Background(), sctl, func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "start --no-block rke2-proxy-backend-verify.service") {
		t.Errorf("a failing systemctl gave %v", err)
	}
}
