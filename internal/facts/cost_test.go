package facts_test

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The probe reads what bench writes, says when it no longer describes the
// node, and treats a broken or oversized file as unreadable, not as data.
func TestProbeReadsBenchFile(t *testing.T) {
	h := testhost.New(t).Debian12()
	tool := "/usr/sbin/xtables-nft-multi"
	fi, err := h.Root().Stat(tool)
	if err != nil {
		t.Fatal(err)
	}
	rep := bench.Report{Services: 5000, Kernel: h.Release(),
		Tools:   []bench.Tool{{Name: "iptables-nft-restore", Path: tool, Size: fi.Size(), ModTimeNs: fi.ModTime().UnixNano()}},
		Results: []bench.Result{{Backend: "iptables-nft", Steps: []bench.Step{{Step: bench.StepFull, WallSeconds: 21}}}}}
	write := func(r bench.Report) {
		data, err := bench.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		h.File(hostfs.BenchFile, string(data))
	}

	if f := facts.Probe(h.Root(), facts.Options{}); f.Cost != nil {
		t.Fatalf("no bench file, yet cost %+v", f.Cost)
	}
	write(rep)
	f := facts.Probe(h.Root(), facts.Options{})
	if f.Cost == nil || f.Cost.Services != 5000 || f.Cost.Stale != "" || len(f.Unreadable) != 0 {
		t.Fatalf("fresh bench file: cost %+v, unreadable %q", f.Cost, f.Unreadable)
	}

	rep.Kernel = "6.0.0-old"
	write(rep)
	if f := facts.Probe(h.Root(), facts.Options{}); f.Cost == nil || !strings.Contains(f.Cost.Stale, "6.0.0-old") {
		t.Errorf("a bench from another kernel must be stale, got %+v", f.Cost)
	}

	for name, content := range map[string]string{
		"corrupt":   "{",
		"oversized": `{"schema":1,"services":1,"kernel":"` + strings.Repeat("x", bench.MaxSize) + `"}`,
		// written before bench results were versioned, or by a newer version
		"no schema":      `{"services":5000,"kernel":"` + h.Release() + `"}`,
		"another schema": `{"schema":2,"services":5000,"kernel":"` + h.Release() + `"}`,
	} {
		h.File(hostfs.BenchFile, content)
		f := facts.Probe(h.Root(), facts.Options{})
		if f.Cost != nil || len(f.Unreadable) != 1 || !strings.Contains(f.Unreadable[0], hostfs.BenchFile) ||
			!strings.Contains(f.Unreadable[0], "run `rke2-proxy-backend bench` again") {
			t.Errorf("%s bench file: cost %+v, unreadable %q", name, f.Cost, f.Unreadable)
		}
	}
	h.Remove(hostfs.BenchFile).Mkdir(hostfs.BenchFile)
	if f := facts.Probe(h.Root(), facts.Options{}); f.Cost != nil || len(f.Unreadable) != 1 {
		t.Errorf("a directory at the bench file's path: cost %+v, unreadable %q", f.Cost, f.Unreadable)
	}
}
