package oracle

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Options says what the oracle programs.
type Options struct {
	Services int  // how many Services (of every kind, cycling)
	IPv6     bool // dual-stack: both families' proxiers; false: IPv4 only
	Kubelet  bool // also the chains kubelet writes at startup
	// IPVS runs kube-proxy's ipvs proxier (proxy-mode=ipvs) with the
	// backend's iptables flavour, instead of the backend's own proxier.
	IPVS bool
}

// Result is what the oracle fed kube-proxy: per IP family ("IPv4",
// "IPv6"), the namespace/name of every Service that family's proxier got.
type Result struct {
	Services map[string][]string
	// IPVS is, in ipvs mode, what kube-proxy's fakes hold after the sync
	// (the parts this machine's kernel cannot give); nil otherwise.
	IPVS *IPVSState
}

// IPVSState is the oracle's --ipvs-out file: what was faked and what the
// fakes hold (the JSON of test/kubeproxy's FakesDump).
type IPVSState struct {
	Faked          string `json:"faked"`
	VirtualServers []struct {
		Address     string   `json:"address"`
		Protocol    string   `json:"protocol"`
		Port        uint16   `json:"port"`
		Scheduler   string   `json:"scheduler"`
		RealServers []string `json:"realServers"`
	} `json:"virtualServers"`
	// KubeIPVS0 are the addresses bound to kube-ipvs0, per family.
	KubeIPVS0 map[string][]string `json:"kubeIPVS0"`
	Sysctls   map[string]int      `json:"sysctls"`
}

// Program runs kube-proxy's real proxier of the given minor in the current
// network namespace (the caller is inside nstest.InNetns) for backend b and
// returns once every family's proxier has synced, with what it fed it. For the iptables backends
// the iptables* commands the proxier finds on PATH are links to the right
// xtables-*-multi, as in the kube-proxy image; kubelet's chains use the same
// flavour (nft for the nftables backend, as RKE2's hosts with nftables use).
func Program(t testing.TB, minor string, b backend.Backend, o Options) Result {
	t.Helper()
	if why := Lacks(minor, b); why != "" {
		t.Fatalf("oracle.Program: %s (a test asks oracle.Fit first)", why)
	}
	if why := LacksKubelet(minor); o.Kubelet && why != "" {
		t.Fatalf("oracle.Program: %s (a test asks oracle.Fit first)", why)
	}
	bin := Binary(t, minor)
	tmp := t.TempDir()
	path, err := flavourPath(tmp, b)
	if err != nil {
		t.Fatalf("oracle %s %s: %v", minor, b, err)
	}
	manifest := filepath.Join(tmp, "manifest.json")
	args := append(Args(b, o), "--manifest", manifest)
	ipvsOut := filepath.Join(tmp, "ipvs.json")
	if o.IPVS {
		args = append(args, "--ipvs-out", ipvsOut)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("oracle %s %s %s: %v\n%s", minor, bin, strings.Join(args, " "), err, out)
	}
	t.Logf("oracle %s %s: %s in %s", minor, strings.Join(args, " "), strings.TrimSpace(lastLine(out)), time.Since(start).Round(time.Millisecond))
	var r Result
	raw, err := os.ReadFile(manifest)
	if err == nil {
		err = json.Unmarshal(raw, &r.Services)
	}
	if err != nil {
		t.Fatalf("oracle %s: reading its manifest %s: %v", minor, manifest, err)
	}
	if o.IPVS {
		r.IPVS = &IPVSState{}
		raw, err := os.ReadFile(ipvsOut)
		if err == nil {
			err = json.Unmarshal(raw, r.IPVS)
		}
		if err != nil {
			t.Fatalf("oracle %s: reading what its ipvs fakes hold, %s: %v", minor, ipvsOut, err)
		}
		t.Logf("oracle %s ipvs mode faked: %s; they hold %d virtual servers, %d+%d addresses on kube-ipvs0 (IPv4+IPv6), sysctls %v",
			minor, r.IPVS.Faked, len(r.IPVS.VirtualServers), len(r.IPVS.KubeIPVS0["IPv4"]), len(r.IPVS.KubeIPVS0["IPv6"]), r.IPVS.Sysctls)
	}
	return r
}

// Args are the oracle's command-line flags for backend b and o.
func Args(b backend.Backend, o Options) []string {
	mode := b.ProxyMode()
	if o.IPVS {
		mode = "ipvs"
	}
	args := []string{"--mode", mode, "--services", fmt.Sprint(o.Services), fmt.Sprintf("--ipv6=%t", o.IPv6)}
	if o.Kubelet {
		args = append(args, "--kubelet")
	}
	return args
}

// flavourPath makes dir hold iptables, iptables-save, iptables-restore and
// their ip6tables twins as links to the xtables multi-call binary of b's
// flavour (xtables-legacy-multi or xtables-nft-multi), the way the
// kube-proxy image's wrapper points them, and returns dir.
func flavourPath(dir string, b backend.Backend) (string, error) {
	multi := "xtables-" + b.IptablesMode() + "-multi"
	target, err := exec.LookPath(multi)
	if err != nil {
		return "", fmt.Errorf("the %s flavour needs %s (Debian package iptables): %w", b.IptablesMode(), multi, err)
	}
	for _, name := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
