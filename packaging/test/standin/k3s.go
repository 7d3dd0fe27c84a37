package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// k3s mode: installed as /usr/local/bin/k3s (packaging/test/k3s-boot.sh)
// the stand-in plays k3s instead of RKE2. What differs is only what k3s does
// differently for kube-proxy: its version line, its config file, and that
// kube-proxy (and kubelet) run inside the k3s process with the unit's own
// environment (IPTABLES_MODE from the unit, no kube-proxy-extra-env) and
// k3s's PATH, through which k3s-root's bin/aux wrappers pick the backend.

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

// flannelChains are chains k3s's embedded flannel keeps (flannel's iptables
// traffic manager) and the built-in chain jumping into each.
var flannelChains = []struct{ table, chain, from string }{
	{"nat", "FLANNEL-POSTRTG", "POSTROUTING"},
	{"filter", "FLANNEL-FWD", "FORWARD"},
}

// flannel plays k3s's flannel: its chains and the jumps into them, through
// k3s's PATH like kube-proxy, since k3s runs flannel in-process (flannel is
// hard-coded to iptables: they share kube-proxy's iptables backend). k3s
// runs it unless its config says flannel-backend: none.
func flannel() error {
	for _, c := range flannelChains {
		if err := ensureChain("iptables", c.table, c.chain); err != nil {
			return fmt.Errorf("flannel's chain %s/%s: %w", c.table, c.chain, err)
		}
		rule := []string{c.from, "-m", "comment", "--comment", "flanneld", "-j", c.chain}
		if xtables("iptables", append([]string{"-t", c.table, "-C"}, rule...)...) == nil {
			continue
		}
		if err := xtables("iptables", append([]string{"-t", c.table, "-A"}, rule...)...); err != nil {
			return fmt.Errorf("flannel's jump %s -> %s: %w", c.from, c.chain, err)
		}
	}
	return nil
}
