package detectreport

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// The cost line: the size, each runnable backend's figures, and a
// "measure again" when they are stale; nothing when never measured; a
// backend the host cannot run is not shown.
func TestCostText(t *testing.T) {
	f := facts.Facts{Kernel: facts.Kernel{Release: "6.1.0", Major: 6, Minor: 1}}
	if got := costText(f); got != "" {
		t.Errorf("never measured: %q", got)
	}
	step := func(name string, v float64) bench.Step { return bench.Step{Step: name, WallSeconds: v} }
	f.Cost = &facts.Cost{Report: bench.Report{Services: 5000, Kernel: "6.1.0", MeasuredAt: "2026-11-30T16:00:00Z", Results: []bench.Result{
		{Backend: "iptables-legacy", Steps: []bench.Step{step("full", 1.1), step("partial", 0.65)}},
		{Backend: "iptables-nft", Steps: []bench.Step{step("full", 21), step("partial", 1.3)}},
		{Backend: "nftables", Steps: []bench.Step{step("full", 11), step("partial", 0.5)}},
	}}}
	// Nothing known about the kernel config: all three are assumed runnable.
	want := "at 5000 services (the last recorded size, bench of 2026-11-30) a full sync takes iptables-legacy 1.1 s, iptables-nft 21 s, nftables 11 s; a one-endpoint change iptables-legacy 0.65 s, iptables-nft 1.3 s, nftables 0.5 s"
	if got := costText(f); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	f.Kernel = facts.Kernel{Release: "5.4.0", Major: 5, Minor: 4, ConfigSource: "/boot/config-5.4.0", Config: map[string]facts.Tristate{"NF_TABLES": "y", "NFT_COMPAT": "y", "IP_NF_IPTABLES": "y"}}
	if got := costText(f); strings.Contains(got, "nftables 11") {
		t.Errorf("kernel 5.4 cannot run kube-proxy's nftables mode, yet: %q", got)
	}
	f.Cost.Stale = "it was measured on kernel 6.1.0 and this is 5.4.0"
	if got := costText(f); !strings.HasSuffix(got, "run `rke2-proxy-backend bench` again") {
		t.Errorf("stale: %q", got)
	}
}
