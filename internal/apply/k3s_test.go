package apply

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const k3sDropIn = "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"

// applyK3s runs apply as the k3s unit's ExecStartPre would (under --root,
// so without its trial) and returns the drop-in it wrote and its log.
func applyK3s(t *testing.T, h *testhost.Host, forced backend.Backend) (string, string) {
	t.Helper()
	kmodtest.Install(t, h.Dir(), h.Release())
	var log bytes.Buffer
	out, err := OnHost(context.Background(), hostplan.Host{Root: h.Root()}, PrepareOptions{Forced: forced,
		Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }})
	if err != nil || out.Verdict != Honoured {
		t.Fatalf("apply: %v, verdict %d %s\n%s", err, out.Verdict, out.Message, log.String())
	}
	data, err := h.Root().ReadFile(k3sDropIn)
	if err != nil {
		t.Fatalf("no k3s drop-in: %v\n%s", err, log.String())
	}
	if h.Root().Exists("/etc/rancher/rke2") {
		t.Errorf("apply wrote under /etc/rancher/rke2 on a k3s node")
	}
	return string(data), log.String()
}

// On k3s apply writes k3s's keys (no kube-proxy-extra-env: k3s has none),
// asks the binary its version, and sets prefer-bundled-bin only where that
// release knows the key (an unknown key stops k3s from starting).
func TestApplyK3sDropIn(t *testing.T) {
	for _, c := range []struct {
		version string
		prefer  bool
	}{{"v1.31.2+k3s1", true}, {"v1.25.5+k3s1", true}, {"v1.25.4+k3s1", false}, {"v1.23.15+k3s1", true}, {"v1.22.17+k3s1", false}} {
		h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sBinary("/usr/local/bin/k3s", c.version)
		got, log := applyK3s(t, h, backend.IptablesNFT)
		if strings.Contains(got, rke2.KeyKubeProxyExtraEnv) || !strings.Contains(got, "kube-proxy-arg+:\n  - \"proxy-mode=iptables\"") {
			t.Errorf("%s: drop-in not in k3s's keys:\n%s", c.version, got)
		}
		if strings.Contains(got, "\nprefer-bundled-bin: true\n") != c.prefer {
			t.Errorf("%s: prefer-bundled-bin set: %v, want %v:\n%s", c.version, !c.prefer, c.prefer, got)
		}
		if !strings.Contains(log, "k3s "+c.version) {
			t.Errorf("%s: the reasons do not name the k3s release:\n%s", c.version, log)
		}
	}
}

// A k3s whose config sets prefer-bundled-bin keeps the operator's value.
func TestApplyK3sRespectsPreferBundledBin(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s-agent", "agent").K3sBinary("/usr/local/bin/k3s", "v1.31.2+k3s1").
		K3sConfig("config.yaml", "prefer-bundled-bin: false\n")
	got, log := applyK3s(t, h, backend.IptablesNFT)
	if strings.Contains(got, "prefer-bundled-bin") || !strings.Contains(log, "sets prefer-bundled-bin itself") {
		t.Errorf("drop-in overrides the operator's prefer-bundled-bin:\n%s\n%s", got, log)
	}
}

// iptables-detect.sh sticks to its first choice by relinking bin/aux: a
// node moved to another mode must get the links reset, or IPTABLES_MODE
// is ignored; links already on the planned mode stay.
func TestApplyK3sResetsStuckAuxLinks(t *testing.T) {
	const aux = "/var/lib/rancher/k3s/data/current/bin/aux/"
	for _, c := range []struct {
		was, want string
		forced    backend.Backend
		reason    string
	}{
		{"xtables-nft-multi", "iptables-detect.sh", backend.IptablesLegacy, "reset to iptables-detect.sh so IPTABLES_MODE=legacy takes effect"},
		{"xtables-legacy-multi", "xtables-legacy-multi", backend.IptablesLegacy, "already point at xtables-legacy-multi"},
		{"iptables-detect.sh", "iptables-detect.sh", backend.IptablesNFT, "honours IPTABLES_MODE=nft"},
	} {
		h := testhost.New(t).Synology44().K3sUnit("k3s-agent", "agent").K3sBinary("/usr/local/bin/k3s", "v1.31.2+k3s1").K3sAux(c.was)
		if c.forced == backend.IptablesNFT {
			h = testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sBinary("/usr/local/bin/k3s", "v1.31.2+k3s1").K3sAux(c.was)
		}
		_, log := applyK3s(t, h, c.forced)
		for _, l := range testhost.K3sAuxLinks {
			if got, err := h.Root().Readlink(aux + l); err != nil || got != c.want {
				t.Errorf("%s -> %s, planned %s: %s now -> %q (%v), want %s", l, c.was, c.forced, l, got, err, c.want)
			}
		}
		if !strings.Contains(log, c.reason) {
			t.Errorf("links %s, planned %s: log lacks %q:\n%s", c.was, c.forced, c.reason, log)
		}
	}
}

// apply runs before every k3s start and reads the merged config, its own
// drop-in included: the prefer-bundled-bin it wrote last time is not the
// operator's, so the next apply (a restart, a switch) must write it again
// rather than drop it and leave k3s on the host's iptables.
func TestApplyK3sKeepsItsOwnPreferBundledBin(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sBinary("/usr/local/bin/k3s", "v1.34.4+k3s1")
	for i, b := range []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} {
		if got, log := applyK3s(t, h, b); !strings.Contains(got, "\nprefer-bundled-bin: true\n") {
			t.Errorf("apply %d (%s): prefer-bundled-bin dropped:\n%s\n%s", i+1, b, got, log)
		}
	}
}
