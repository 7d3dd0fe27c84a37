package bench

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A report goes stale when the kernel changes, or when a loader binary is
// replaced or removed; an untouched node keeps it.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "xtables-nft-multi")
	if err := os.WriteFile(tool, []byte("v1.8.9"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(tool)
	rep := Report{Services: 1000, Kernel: "6.18.0", Tools: []Tool{{Name: "iptables-nft-restore", Path: tool, Version: "iptables-nft-restore v1.8.9 (nf_tables)", Size: fi.Size(), ModTimeNs: fi.ModTime().UnixNano()}}}
	if why := Stale(rep, "6.18.0", os.Stat); why != "" {
		t.Fatalf("fresh report called stale: %s", why)
	}
	if why := Stale(rep, "6.19.1", os.Stat); why == "" {
		t.Error("a new kernel must make the report stale")
	}
	// An upgrade rewrites the binary: new size and mtime.
	if err := os.WriteFile(tool, []byte("v1.8.10"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	_ = os.Chtimes(tool, later, later)
	if why := Stale(rep, "6.18.0", os.Stat); why == "" {
		t.Error("a replaced loader binary must make the report stale")
	}
	os.Remove(tool)
	if why := Stale(rep, "6.18.0", os.Stat); why == "" {
		t.Error("a removed loader binary must make the report stale")
	}
}

// bench --backend B refreshes B and keeps the others measured at the same
// size on the same kernel; another size replaces everything.
func TestMerge(t *testing.T) {
	res := func(b string, wall float64) Result {
		return Result{Backend: backendName(b), Steps: []Step{{Step: StepFull, WallSeconds: wall}}}
	}
	old := Report{Services: 1000, Kernel: "k", Results: []Result{res("iptables-legacy", 1), res("nftables", 2)}, Skipped: []Skipped{{Backend: "iptables-nft", Reason: "x"}}}
	cur := Report{Services: 1000, Kernel: "k", Results: []Result{res("iptables-nft", 3)}}
	got := Merge(old, cur)
	if len(got.Results) != 3 || got.Results[0].Backend != "iptables-legacy" || got.Results[1].Backend != "iptables-nft" || len(got.Skipped) != 0 {
		t.Errorf("same size: want all three, in backend order, nothing skipped; got %+v", got)
	}
	cur.Services = 5000
	if got := Merge(old, cur); len(got.Results) != 1 {
		t.Errorf("another size must replace the old figures, got %+v", got)
	}
}

func backendName(s string) backend.Backend { return backend.Backend(s) }
