// Command standin plays RKE2 and its kube-proxy in packaging/test/boot.sh's
// systemd-nspawn guest, installed as /usr/local/bin/rke2 (the tarball
// layout) and started by a faithful copy of RKE2's rke2-server.service
// (`rke2 server`) or rke2-agent.service (`rke2 agent`, packaging/test/
// cloudinit-boot.sh's agent example). Both roles do the same below; an agent
// first insists, as RKE2's agent does, on the server URL and a token in its
// config (it never contacts the server).
//
// It does what matters to rke2-proxy-backend and nothing more: it records
// its arguments and environment, reads RKE2's config the way RKE2 does
// (config.yaml, then config.yaml.d/*.yaml|*.yml in name order, "key+"
// appends), picks kube-proxy's backend from proxy-mode= and IPTABLES_MODE=
// the way kube-proxy's image does, plays kubelet (what the real kubelet
// writes, through the host's iptables alternative), then runs kube-proxy's
// real proxier for that backend (the oracle, test/kubeproxy, built for this
// RKE2's Kubernetes minor and copied in by boot.sh) in the guest's own
// network namespace until its first successful sync (and, when the test
// asks for kube-proxy's resync, keeps it running the way the real one runs,
// see resyncFile), serves
// kube-proxy's /proxyMode on 127.0.0.1:10249, and only then tells systemd
// READY=1 (rke2-server is Type=notify).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	yaml "go.yaml.in/yaml/v3"
)

// Version is what `rke2 --version` prints: RKE2's own format. boot.sh
// reads the Kubernetes minor from it to pick the oracle build. A test that
// needs another release sets it at build time (build_standin OUT VERSION:
// -ldflags -X main.Version=...).
var Version = "v1.34.4+rke2r1"

// dataDir is named as RKE2 names it: the version with "+" as "-", then
// the first 12 hex digits of the runtime image's digest; verify learns the
// Kubernetes version from this name at boot.
func dataDir() string {
	return "/var/lib/rancher/rke2/data/" + strings.ReplaceAll(Version, "+", "-") + "-5ca1ab1e0b0e"
}

// Where the stand-in records and what it runs (tests point them elsewhere).
var (
	recordDir = "/var/lib/rke2-standin"
	// oracle is kube-proxy: boot.sh installs the oracle binary here.
	oracle = "/usr/local/lib/rke2-standin/kubeproxy-oracle"
)

const (
	// services is how many Services the stand-in's cluster has.
	services = 30
	// resyncFile, when a test writes a duration into it (e.g. "5s"), makes
	// kube-proxy stay after its first sync with that sync period (the real
	// kube-proxy's --iptables-sync-period, 30s by default): it then notices
	// a flushed table and writes its rules again, and kubelet re-ensures its
	// chains as often. Without it kube-proxy exits after its first sync.
	resyncFile = "/usr/local/lib/rke2-standin/kube-proxy-resync"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		if isK3s() {
			fmt.Printf("k3s version %s (abcdef12)\ngo version go1\n", k3sVersion())
			return
		}
		fmt.Printf("rke2 version %s (standin)\ngo version go1\n", Version)
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rke2 standin: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	role, err := subcommand(os.Args[1:])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(recordDir, 0o755); err != nil {
		return err
	}
	// RKE2 unpacks its runtime here on first start; later boots can learn
	// the version from the name without running the binary. (k3s's data
	// dir, with bin/aux, is laid out by k3s-boot.sh.)
	if !isK3s() {
		if err := os.MkdirAll(dataDir(), 0o755); err != nil {
			return err
		}
	}
	env := os.Environ()
	sort.Strings(env)
	if err := record("args", strings.Join(os.Args, "\n")+"\n"); err != nil {
		return err
	}
	if err := record("env", strings.Join(env, "\n")+"\n"); err != nil {
		return err
	}
	mainFile := os.Getenv("RKE2_CONFIG_FILE")
	if mainFile == "" {
		mainFile = "/etc/rancher/rke2/config.yaml"
	}
	if isK3s() {
		mainFile = k3sConfigFile()
	}
	cfg, err := loadConfig(mainFile)
	if err != nil {
		return err
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := record("config.json", string(data)+"\n"); err != nil {
		return err
	}
	if role == "agent" {
		if err := agentJoin(cfg.Values); err != nil {
			return err
		}
	}
	backend, mode, err := pickBackend(cfg.Values)
	if err != nil {
		return err
	}
	if isK3s() {
		// kubelet and kube-proxy run in k3s's process, on its PATH.
		os.Setenv("PATH", k3sPath(cfg.Values))
	} else if err := record("backend", backend+"\n"); err != nil {
		return err
	}
	// kubelet starts before kube-proxy on a node.
	if err := kubelet(); err != nil {
		return err
	}
	if isK3s() {
		if err := companions(cfg.Values); err != nil {
			return err
		}
	}
	resync, err := readResync()
	if err != nil {
		return err
	}
	proxy, err := kubeProxy(backend, mode, resync)
	if err != nil {
		return err
	}
	if isK3s() {
		if backend, err = observedBackend(mode); err != nil {
			return err
		}
		if err := record("backend", backend+"\n"); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", metricsAddress(cfg.Values))
	if err != nil {
		return fmt.Errorf("kube-proxy metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, mode) })
	go http.Serve(ln, mux)

	if ok, err := daemon.SdNotify(false, daemon.SdNotifyReady); !ok {
		return fmt.Errorf("sd_notify READY=1 not delivered (NOTIFY_SOCKET=%q): %v", os.Getenv("NOTIFY_SOCKET"), err)
	}
	fmt.Printf("rke2 standin: kube-proxy on %s (proxy-mode %s), ready\n", backend, mode)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	if proxy == nil {
		<-stop
		return nil
	}
	return stay(proxy, resync, stop)
}

// readResync reads resyncFile: 0 when it is absent.
func readResync() (time.Duration, error) {
	data, err := os.ReadFile(resyncFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(data)))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration (write e.g. 5s, or remove the file for a one-shot kube-proxy): %v", resyncFile, strings.TrimSpace(string(data)), err)
	}
	return d, nil
}

// stay runs while kube-proxy (proxy) runs: kubelet re-ensures its chains
// every period, as the real kubelet's canary monitor does after a flush;
// SIGTERM stops kube-proxy and then the stand-in, and kube-proxy dying is
// RKE2 failing.
func stay(proxy *exec.Cmd, period time.Duration, stop chan os.Signal) error {
	exited := make(chan error, 1)
	go func() { exited <- proxy.Wait() }()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			proxy.Process.Signal(syscall.SIGTERM)
			<-exited
			return nil
		case err := <-exited:
			return fmt.Errorf("kube-proxy (%s) exited: %v", oracle, err)
		case <-tick.C:
			if err := kubelet(); err != nil {
				fmt.Fprintln(os.Stderr, "rke2 standin: "+err.Error())
			}
		}
	}
}

// subcommand is the role RKE2 was started as: RKE2's units run `rke2
// server` or `rke2 agent`; anything else is a unit the stand-in does not
// play, and saying so beats pretending to be RKE2.
func subcommand(args []string) (string, error) {
	if len(args) > 0 && (args[0] == "server" || args[0] == "agent") {
		return args[0], nil
	}
	return "", fmt.Errorf("usage: rke2 server|agent (got %q): the stand-in plays only the commands RKE2's rke2-server.service and rke2-agent.service run", args)
}

// agentJoin refuses to start an agent whose merged config lacks what RKE2's
// agent needs to join (k3s pkg/cli/agent: "--server is required", then a
// token: token or token-file); the stand-in never dials the server.
func agentJoin(values map[string]any) error {
	if s, _ := values["server"].(string); s == "" {
		return errors.New("rke2 agent: no server: in RKE2's config (config.yaml or config.yaml.d): an agent needs the server's URL, https://<server>:9345")
	}
	tok, _ := values["token"].(string)
	tokFile, _ := values["token-file"].(string)
	if tok == "" && tokFile == "" {
		return errors.New("rke2 agent: neither token: nor token-file: in RKE2's config: an agent needs the server's token")
	}
	if tokFile != "" {
		if data, err := os.ReadFile(tokFile); err != nil || strings.TrimSpace(string(data)) == "" {
			return fmt.Errorf("rke2 agent: token-file %s from RKE2's config is missing or empty (%v): write the server's token there", tokFile, err)
		}
	}
	return nil
}

func record(name, content string) error {
	return os.WriteFile(filepath.Join(recordDir, name), []byte(content), 0o644)
}

// Config is RKE2's merged config as the stand-in read it.
type Config struct {
	Files  []string       `json:"files"`
	Values map[string]any `json:"values"`
}

func loadConfig(main string) (Config, error) {
	cfg := Config{Values: map[string]any{}}
	files := []string{}
	if _, err := os.Stat(main); err == nil {
		files = append(files, main)
	}
	entries, err := os.ReadDir(main + ".d")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return cfg, err
	}
	var dropIns []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml") {
			dropIns = append(dropIns, filepath.Join(main+".d", e.Name()))
		}
	}
	sort.Strings(dropIns)
	files = append(files, dropIns...)
	for _, f := range files {
		if err := mergeFile(cfg.Values, f); err != nil {
			return cfg, err
		}
	}
	cfg.Files = files
	return cfg, nil
}

// mergeFile applies one file's top-level keys in file order: "key+" appends
// to what earlier files set, "key" replaces.
func mergeFile(values map[string]any, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a mapping", file)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key := m.Content[i].Value
		var v any
		if err := m.Content[i+1].Decode(&v); err != nil {
			return fmt.Errorf("%s: %s: %w", file, key, err)
		}
		if base, ok := strings.CutSuffix(key, "+"); ok {
			values[base] = append(asList(values[base]), asList(v)...)
			continue
		}
		values[key] = v
	}
	return nil
}

func asList(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// pickBackend follows RKE2 (default proxy-mode=iptables, last proxy-mode=
// wins) and kube-proxy's image (k3s-root's iptables-detect.sh honours
// IPTABLES_MODE=legacy|nft only and fails on anything else; without it a
// fresh node counts no rules and follows the host's alternative, which on
// Debian is iptables-nft).
func pickBackend(values map[string]any) (backend, mode string, err error) {
	mode = "iptables"
	for _, a := range asList(values["kube-proxy-arg"]) {
		s := strings.TrimLeft(fmt.Sprint(a), "-")
		if v, ok := strings.CutPrefix(s, "proxy-mode="); ok {
			mode = v
		}
	}
	ipt := ""
	for _, e := range asList(values["kube-proxy-extra-env"]) {
		if v, ok := strings.CutPrefix(fmt.Sprint(e), "IPTABLES_MODE="); ok {
			ipt = v
		}
	}
	switch mode {
	case "nftables":
		return "nftables", mode, nil
	case "iptables", "ipvs":
		// ipvs mode programs iptables through the same wrapper: the
		// backend under it follows IPTABLES_MODE as iptables mode's does.
	default:
		return "", "", fmt.Errorf("proxy-mode=%s is not handled by the stand-in", mode)
	}
	switch {
	case ipt == "legacy":
		return "iptables-legacy", mode, nil
	case ipt == "nft" || ipt == "":
		return "iptables-nft", mode, nil
	}
	return "", "", fmt.Errorf("IPTABLES_MODE=%s: kube-proxy's iptables wrapper accepts only legacy or nft; every iptables call would fail", ipt)
}

// metricsAddress is where kube-proxy's metrics server listens: the last
// metrics-bind-address= in kube-proxy-arg (RKE2 passes the args in order,
// the last flag wins), with kube-proxy's port 10249 when it names only an
// IP; kube-proxy's default 127.0.0.1:10249 otherwise.
func metricsAddress(values map[string]any) string {
	addr := "127.0.0.1:10249"
	for _, a := range asList(values["kube-proxy-arg"]) {
		s := strings.TrimLeft(fmt.Sprint(a), "-")
		if v, ok := strings.CutPrefix(s, "metrics-bind-address="); ok && v != "" {
			addr = v
		}
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "10249")
	}
	return addr
}

// kubeProxy runs kube-proxy's real proxier (the oracle) for backend with
// the iptables* commands on its PATH pointing at the xtables multi-call
// binary IPTABLES_MODE chose, as the kube-proxy image's wrapper does (the
// nftables proxier calls nft, which is on PATH as is). It returns after the
// first successful sync of each family, leaving the rules in place; with a
// resync period kube-proxy keeps running and is returned.
func kubeProxy(backend, mode string, resync time.Duration) (*exec.Cmd, error) {
	// A node without IPv6 runs kube-proxy single-stack.
	_, noIPv6 := os.Stat("/proc/net/if_inet6")
	args := []string{"--mode", mode, "--services", fmt.Sprint(services), fmt.Sprintf("--ipv6=%t", noIPv6 == nil)}
	cmd := exec.Command(oracle, args...)
	if !isK3s() { // k3s's kube-proxy has k3s's environment and PATH as is
		path, err := imageWrapper(backend)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(os.Environ(), "PATH="+path)
	}
	return startKubeProxy(cmd, args, resync)
}

// imageWrapper is the PATH of RKE2's kube-proxy image for backend: the
// iptables* commands point at the xtables multi-call binary IPTABLES_MODE
// chose, as the image's wrapper does.
func imageWrapper(backend string) (string, error) {
	flavour := "nft"
	if backend == "iptables-legacy" {
		flavour = "legacy"
	}
	multi, err := exec.LookPath("xtables-" + flavour + "-multi")
	if err != nil {
		return "", fmt.Errorf("kube-proxy's iptables wrapper: %w", err)
	}
	bin := filepath.Join("/run/rke2-standin", "iptables-"+flavour)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		link := filepath.Join(bin, name)
		os.Remove(link)
		if err := os.Symlink(multi, link); err != nil {
			return "", err
		}
	}
	return bin + ":" + os.Getenv("PATH"), nil
}

// startKubeProxy runs kube-proxy (cmd, with args) until its first sync;
// with a resync period it stays running and is returned.
func startKubeProxy(cmd *exec.Cmd, args []string, resync time.Duration) (*exec.Cmd, error) {
	if resync == 0 {
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("kube-proxy (%s %s): %w\n%s", oracle, strings.Join(args, " "), err, out)
		}
		return nil, record("kube-proxy", string(out))
	}
	args = append(args, "--resync", resync.String())
	cmd.Args = append([]string{oracle}, args...)
	// Its log (klog) goes to RKE2's journal; its stdout says when the
	// first sync is done.
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kube-proxy (%s %s): %w", oracle, strings.Join(args, " "), err)
	}
	lines := bufio.NewScanner(stdout)
	var out strings.Builder
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "staying") {
			go io.Copy(os.Stdout, stdout)
			return cmd, record("kube-proxy", out.String())
		}
	}
	err = cmd.Wait()
	return nil, fmt.Errorf("kube-proxy (%s %s) ended before its first sync: %v\n%s", oracle, strings.Join(args, " "), err, out.String())
}

// kubelet plays kubelet's part at its start: what the real kubelet of the
// oracle's Kubernetes minor writes (the hint, KUBE-FIREWALL with its
// INPUT/OUTPUT jumps in IPv4, the canaries: test/kubeproxy's
// --kubelet-only, through the same k8s iptables client) with the host's
// iptables command, whatever its alternative points at, as kubelet runs
// on the host. It records which iptables that was per family.
//
// Like the real kubelet it never stops the node over these chains: they
// are for other components, so kubelet logs "Failed to initialize
// iptables rules; some functionality may be missing." and carries on
// (pkg/kubelet/kubelet_network_linux.go, initNetworkUtil), e.g. on a
// kernel without nf_tables whose host iptables is Debian's default nft
// (iptables exits 4). The stand-in logs the same, records it in
// kubelet-failed, and RKE2 goes on. (The real kubelet tries each family
// on its own; the oracle stops at the first that fails.)
func kubelet() error {
	out, err := exec.Command(oracle, "--kubelet-only", "--ipv6=true").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("Failed to initialize iptables rules; some functionality may be missing. (%s --kubelet-only: %v: %s)", oracle, err, strings.TrimSpace(string(out)))
		fmt.Fprintln(os.Stderr, "rke2 standin: kubelet: "+msg)
		return record("kubelet-failed", msg+"\n")
	}
	if err := os.Remove(filepath.Join(recordDir, "kubelet-failed")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for family, cmd := range map[string]string{"ipv4": "iptables", "ipv6": "ip6tables"} {
		path, _ := exec.LookPath(cmd)
		target, _ := filepath.EvalSymlinks(path)
		if err := record("kubelet-"+family, target+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// ensureChain is kubelet's EnsureChain: create the chain, and take exit
// status 1 ("Chain already exists") as done.
func ensureChain(cmd, table, chain string) error {
	err := xtables(cmd, "-N", chain, "-t", table)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return err
}

// xtables runs one iptables-family call (cmd) with the xtables lock wait
// (5 s); the 10 s bound ends a call stuck on the lock.
func xtables(cmd string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cmd, append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
