// Command kubeproxy-oracle programs, in the current network namespace, the
// rules kube-proxy's real iptables or nftables proxier (linked from
// k8s.io/kubernetes) writes for a deterministic set of Services, and
// optionally what kubelet writes at startup; then it exits, or with --resync
// keeps the proxier's SyncLoop running until SIGTERM. Tests use it as
// the oracle for what a healthy node's rules look like. It needs no API
// server: the Services and EndpointSlices are fed to the proxier's handlers
// directly, as kube-proxy's informers would.
//
//	kubeproxy-oracle --mode iptables|nftables|ipvs --services N [--ipv6=false] [--kubelet] [--metrics-out FILE] [--ipvs-out FILE] [--resync D]
//	kubeproxy-oracle --kubelet-only [--ipv6=false]
//
// --kubelet-only writes what kubelet writes at startup and exits: the RKE2
// stand-in plays kubelet with it, through the host's iptables.
//
// --mode ipvs runs the ipvs proxier with the real iptables and the real
// ipset command; what this machine's kernel lacks (ip_vs, dummy links) is
// kube-proxy's own fakes, which it says in its output, and --ipvs-out
// writes what they hold after the sync (virtual servers, kube-ipvs0's
// addresses, the vs sysctls) as JSON.
//
// --resync D makes it stay like a running kube-proxy (the RKE2 stand-in of
// the boot test): the proxier keeps its SyncLoop with D as kube-proxy's
// --iptables-sync-period (its default is 30s), so it notices a flushed
// table (the iptables proxier's canary chains) and writes its rules again.
// It prints its "synced" line after the first sync and exits 0 on SIGTERM.
//
// The iptables flavour is the one the iptables* commands on PATH run
// (xtables-legacy-multi or xtables-nft-multi), as in the kube-proxy image.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/healthcheck"
	"k8s.io/kubernetes/pkg/proxy/metrics"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
)

func main() {
	mode := flag.String("mode", "", "kube-proxy's proxy mode: iptables, nftables or ipvs")
	services := flag.Int("services", 10, "how many Services to program")
	ipv6 := flag.Bool("ipv6", true, "dual-stack (IPv4 and IPv6 proxiers); false: IPv4 only")
	kubelet := flag.Bool("kubelet", false, "also write what kubelet writes at startup (iptables chains)")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up when the proxier has not synced by then")
	verbosity := flag.Int("v", 0, "kube-proxy's log verbosity (klog -v)")
	manifest := flag.String("manifest", "", "write the Services fed to each family's proxier to this JSON file")
	metricsOut := flag.String("metrics-out", "", "after the first sync, write kube-proxy's /metrics page to this file")
	ipvsOut := flag.String("ipvs-out", "", "--mode ipvs: after the first sync, write what kube-proxy's fakes hold to this JSON file")
	resync := flag.Duration("resync", 0, "stay after the first sync, resyncing with this sync period, until SIGTERM (0: exit after the first sync)")
	kubeletOnly := flag.Bool("kubelet-only", false, "write only what kubelet writes at startup, then exit (no proxier)")
	flag.Parse()
	if *kubeletOnly {
		if err := kubeletAlone(families(*ipv6), *timeout); err != nil {
			fmt.Fprintln(os.Stderr, "kubeproxy-oracle:", err)
			os.Exit(1)
		}
		return
	}
	if *resync < 0 {
		fmt.Fprintf(os.Stderr, "kubeproxy-oracle: --resync %s: want a positive period, or 0 to exit after the first sync\n", *resync)
		os.Exit(2)
	}
	outs := outputs{manifest: *manifest, metrics: *metricsOut, ipvs: *ipvsOut}
	if err := run(*mode, *services, *ipv6, *kubelet, *timeout, *verbosity, outs, *resync); err != nil {
		fmt.Fprintln(os.Stderr, "kubeproxy-oracle:", err)
		os.Exit(1)
	}
}

// proxierParams is what the per-era constructor adapters need.
type proxierParams struct {
	config    *config.KubeProxyConfiguration
	families  []v1.IPFamily
	ipts      iptablesClients
	detectors map[v1.IPFamily]proxyutil.LocalTrafficDetector
	recorder  events.EventRecorder
	healthz   *healthcheck.ProxyHealthServer
	ipvs      *ipvsFakes // ipvs mode only
}

// outputs are the files the oracle writes after the first sync ("": not).
type outputs struct{ manifest, metrics, ipvs string }

func run(mode string, services int, ipv6, kubelet bool, timeout time.Duration, verbosity int, outs outputs, resync time.Duration) error {
	var proxyMode config.ProxyMode
	switch mode {
	case "iptables":
		proxyMode = config.ProxyModeIPTables
	case "nftables":
		proxyMode = config.ProxyModeNFTables
	case "ipvs":
		proxyMode = config.ProxyModeIPVS
	default:
		return fmt.Errorf("--mode %q: want iptables, nftables or ipvs", mode)
	}
	if outs.ipvs != "" && proxyMode != config.ProxyModeIPVS {
		return fmt.Errorf("--ipvs-out %s: only --mode ipvs has IPVS fakes to write", outs.ipvs)
	}
	if services < 0 {
		return fmt.Errorf("--services %d: want 0 or more", services)
	}
	logs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(logs)
	_ = logs.Set("v", fmt.Sprint(verbosity))

	// The proxier lives until SIGTERM (its canary monitor and SyncLoop
	// use it); only the wait for the first sync has the timeout.
	life, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(life, timeout)
	defer cancel()
	cfg, err := defaultConfig(proxyMode)
	if err != nil {
		return err
	}
	if resync > 0 {
		cfg.SyncPeriod.Duration = resync
	}
	p := proxierParams{
		config:    cfg,
		families:  families(ipv6),
		ipts:      newIPTablesClients(),
		detectors: map[v1.IPFamily]proxyutil.LocalTrafficDetector{},
		recorder:  &events.FakeRecorder{},
		// Never served: it only records the proxier's sync times. A nil
		// node manager is fine because nothing asks /healthz.
		healthz: healthcheck.NewProxyHealthServer("127.0.0.1:0", 2*cfg.SyncPeriod.Duration, nil),
	}
	for _, f := range p.families {
		p.detectors[f] = proxyutil.NewDetectLocalByCIDR(clusterCIDRs[f])
	}
	if proxyMode == config.ProxyModeIPVS {
		p.ipvs = newIPVSFakes()
		fmt.Printf("kubeproxy-oracle: ipvs mode: faked: %s\n", ipvsFaked)
	}
	if proxyMode != config.ProxyModeNFTables || kubelet {
		if err := p.ipts.open(p.families); err != nil {
			return err
		}
	}
	if kubelet {
		if err := kubeletRules(ctx, p.ipts, p.families); err != nil {
			return err
		}
	}
	// Registering is what makes the sync-timestamp gauges real.
	metrics.RegisterMetrics(proxyMode)
	proxier, err := newProxier(life, p)
	if err != nil {
		return fmt.Errorf("creating the %s proxier: %w", mode, err)
	}
	c := newCluster(services, ipv6, proxyMode == config.ProxyModeIPVS)
	for _, s := range c.Services {
		proxier.OnServiceAdd(s)
	}
	for _, s := range c.Slices {
		proxier.OnEndpointSliceAdd(s)
	}
	var cidrs []string
	for _, f := range p.families {
		cidrs = append(cidrs, serviceCIDRs[f])
	}
	proxier.OnServiceCIDRsChanged(cidrs)
	proxier.OnServiceSynced()
	proxier.OnEndpointSlicesSynced()
	go proxier.SyncLoop()
	if err := waitSynced(ctx, p.families); err != nil {
		return fmt.Errorf("%s proxier with %d services: %w", mode, services, err)
	}
	if outs.manifest != "" {
		if err := writeManifest(outs.manifest, c, p.families); err != nil {
			return err
		}
	}
	if outs.metrics != "" {
		if err := dumpMetrics(outs.metrics); err != nil {
			return err
		}
	}
	if outs.ipvs != "" {
		if err := p.ipvs.dump(outs.ipvs); err != nil {
			return err
		}
	}
	fmt.Printf("kubeproxy-oracle: %s proxier synced %d services (%d endpoint slices) for %v\n", mode, len(c.Services), len(c.Slices), p.families)
	if resync == 0 {
		return nil
	}
	fmt.Printf("kubeproxy-oracle: staying, resyncing every %s until SIGTERM\n", resync)
	<-life.Done()
	return nil
}
