package costbench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

// OnHost on a fixture root without a kernel release: nftables cannot be
// judged runnable and is left out with the reason (or refused when asked
// for alone), the iptables backends are measured (each in a namespace of
// its own: this process's rules are not touched) and recorded under the
// root; a one-backend run keeps the other's figures; a record it cannot
// read is said to be replaced. Not as root, it refuses before anything.
func TestOnHost(t *testing.T) {
	ctx := context.Background()
	root := hostfs.New(t.TempDir())
	var progress strings.Builder
	if os.Geteuid() != 0 {
		_, _, err := OnHost(ctx, root, 3, "", &progress)
		if err == nil || !strings.HasPrefix(err.Error(), "bench needs root: ") {
			t.Errorf("not root: %v; want the refusal", err)
		}
		return
	}
	needLoaders(t, backend.IptablesLegacy)
	needLoaders(t, backend.IptablesNFT)
	if _, err := root.WriteFileAtomic(hostfs.BenchFile, []byte(`{"services": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	record := root.Path(hostfs.BenchFile)

	rep, data, err := OnHost(ctx, root, 3, "", &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[0].Backend != backend.IptablesLegacy || rep.Results[1].Backend != backend.IptablesNFT {
		t.Errorf("results %+v; want iptables-legacy and iptables-nft", rep.Results)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Backend != backend.NFTables || !strings.Contains(rep.Skipped[0].Reason, "the kernel release is unknown") {
		t.Errorf("skipped %+v; want nftables, for the unknown kernel", rep.Skipped)
	}
	check.Says(t, "progress", progress.String(), "bench: nftables: skipped: ", "bench: the earlier result in "+record+" is not kept: no \"schema\"")
	if got, err := os.ReadFile(record); err != nil || string(got) != string(data) {
		t.Errorf("recorded %q, %v; want the bytes returned", got, err)
	}

	if _, _, err := OnHost(ctx, root, 3, backend.NFTables, &progress); err == nil || !strings.HasPrefix(err.Error(), "--backend nftables: this host cannot run it: ") {
		t.Errorf("nftables alone: %v; want it refused", err)
	}
	again, _, err := OnHost(ctx, root, 3, backend.IptablesNFT, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Result(backend.IptablesLegacy); !ok {
		t.Errorf("a run of iptables-nft alone lost iptables-legacy's figures: %+v", again.Results)
	}
	recorded, rerr := root.ReadFile(hostfs.BenchFile)
	back, err := bench.Parse(recorded)
	if rerr != nil || err != nil || len(back.Results) != 2 {
		t.Errorf("record after the merge: %+v, read %v, parse %v; want both backends", back.Results, rerr, err)
	}
}

func TestText(t *testing.T) {
	rep := bench.Report{Services: 1000, Kernel: "6.1.0-28-amd64",
		Tools: []bench.Tool{{Name: "iptables-legacy-restore", Version: "iptables-restore v1.8.9 (legacy)"}, {Name: "nft"}},
		Results: []bench.Result{{Backend: backend.IptablesLegacy, Steps: []bench.Step{
			{Step: bench.StepFull, WallSeconds: 0.5, UserSeconds: 0.25, SysSeconds: 0.125},
			{Step: bench.StepPartial, WallSeconds: 0.0125, UserSeconds: 0.001, SysSeconds: 0.002},
		}}},
		Skipped: []bench.Skipped{{Backend: backend.NFTables, Reason: "the kernel lacks nf_tables"}},
	}
	want := `1000 services (2 endpoints each, IPv4 and IPv6), kernel 6.1.0-28-amd64
  iptables-legacy-restore: iptables-restore v1.8.9 (legacy)
  nft: unknown

backend          full sync: wall (CPU)        partial sync: wall (CPU)
iptables-legacy  0.500 s (0.375 s)            0.013 s (0.003 s)
nftables         not measured: the kernel lacks nf_tables
`
	if got := Text(rep); got != want {
		t.Errorf("Text:\n%s\nwant\n%s", got, want)
	}
}
