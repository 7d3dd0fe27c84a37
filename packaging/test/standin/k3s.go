package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/k3sgroup"
)

// k3s mode: installed as /usr/local/bin/k3s (packaging/test/k3s-boot.sh)
// the stand-in plays k3s instead of RKE2. What differs is only what k3s does
// differently for kube-proxy: its version line, its config file, and that
// kube-proxy (and kubelet) run inside the k3s process with the unit's own
// environment (IPTABLES_MODE from the unit, no kube-proxy-extra-env) and
// k3s's PATH, through which k3s-root's bin/aux wrappers pick the backend;
// flannel and kube-router's network policy controller, which k3s runs
// in-process too, write their chains through the same PATH (companions).

// isK3s reports whether the stand-in was started under k3s's name.
func isK3s() bool { return filepath.Base(os.Args[0]) == "k3s" }

// k3sVersion is Version in k3s's spelling: v1.34.4+rke2r1 is v1.34.4+k3s1.
func k3sVersion() string { return strings.Replace(Version, "+rke2r", "+k3s", 1) }

// k3sConfigFile is k3s's main config: K3S_CONFIG_FILE, else its default.
func k3sConfigFile() string {
	if f := os.Getenv("K3S_CONFIG_FILE"); f != "" {
		return f
	}
	return "/etc/rancher/k3s/config.yaml"
}

// k3sPath is the PATH k3s gives everything it runs in-process
// (cmd/k3s/main.go): <data>/bin, then the host's PATH, then <data>/bin/aux,
// so the host's iptables wins; with prefer-bundled-bin bin/aux comes before
// the host's PATH.
func k3sPath(values map[string]any) string {
	data := "/var/lib/rancher/k3s"
	if d, _ := values["data-dir"].(string); d != "" {
		data = d
	}
	bin := filepath.Join(data, "data", "current", "bin")
	aux := filepath.Join(bin, "aux")
	if b, _ := values["prefer-bundled-bin"].(bool); b {
		return bin + ":" + aux + ":" + os.Getenv("PATH")
	}
	return bin + ":" + os.Getenv("PATH") + ":" + aux
}

// observedBackend is the backend kube-proxy's iptables calls went to: the
// multi-call binary the first iptables on PATH resolves to once they ran
// (bin/aux's links as iptables-detect.sh left them, or the host's
// alternative). It is read, not predicted, so the record says what k3s's
// PATH really did.
func observedBackend(mode string) (string, error) {
	if mode == "nftables" {
		return "nftables", nil
	}
	p, err := exec.LookPath("iptables")
	if err != nil {
		return "", fmt.Errorf("k3s's PATH has no iptables: %w", err)
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("k3s's iptables %s: %w", p, err)
	}
	switch filepath.Base(target) {
	case "xtables-legacy-multi":
		return "iptables-legacy", nil
	case "xtables-nft-multi":
		return "iptables-nft", nil
	}
	return "", fmt.Errorf("k3s's iptables %s resolves to %s, neither xtables multi-call binary", p, target)
}

// companions plays k3s's flannel and kube-router network policy
// controller: their chains and the jumps into them (internal/testkit/
// k3sgroup, shaped as theirs), written one iptables call at a time through
// k3s's PATH as kube-proxy's are, since k3s runs both in-process: they
// share kube-proxy's iptables backend (flannel is hard-coded to iptables,
// kube-router's netpol speaks iptables and ipset). k3s runs flannel unless
// its config says flannel-backend: none, kube-router's controller unless
// disable-network-policy. Like the real ones it ensures each rule (-C
// first), so a restart on the same backend adds nothing twice.
func companions(values map[string]any) error {
	var ws []k3sgroup.Writer
	if fmt.Sprint(values["flannel-backend"]) != "none" {
		ws = append(ws, k3sgroup.Flannel)
	}
	if fmt.Sprint(values["disable-network-policy"]) != "true" {
		ws = append(ws, k3sgroup.KubeRouter)
	}
	for _, w := range ws {
		for _, c := range w.Chains {
			if err := ensureChain("iptables", c.Table, c.Name); err != nil {
				return fmt.Errorf("%s's chain %s/%s: %w", w.Name, c.Table, c.Name, err)
			}
		}
		for _, r := range w.Rules {
			spec := append([]string{"-t", r.Table, "-C", r.Chain}, r.Args...)
			if xtables("iptables", spec...) == nil {
				continue
			}
			add := []string{"-t", r.Table, "-A", r.Chain}
			if r.Insert {
				add = []string{"-t", r.Table, "-I", r.Chain, "1"}
			}
			if err := xtables("iptables", append(add, r.Args...)...); err != nil {
				return fmt.Errorf("%s's rule in %s/%s: %w", w.Name, r.Table, r.Chain, err)
			}
		}
	}
	return nil
}
