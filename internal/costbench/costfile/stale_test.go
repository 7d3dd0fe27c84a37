package costfile

import (
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
