package facts

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// Cost is bench's last measurement of each backend's rule-load cost on
// this node (hostfs.BenchFile), and whether it still describes the node.
type Cost struct {
	bench.Report
	// Stale says why the figures no longer hold ("" while they do): another
	// kernel, or a loader binary replaced since. Measure again with bench.
	Stale string `json:"stale,omitempty"`
}

// cost reads the bench result, bounded like every read (a regular file of
// at most bench.MaxSize bytes). No file is the normal case: nothing was
// measured, and nothing is said.
func (p *probe) cost(kernelRelease string) *Cost {
	data, err := p.root.ReadFileMax(hostfs.BenchFile, bench.MaxSize)
	if err != nil {
		if !isNotExist(err) {
			p.unreadable("%s: %s: the measured backend costs are unknown; run `rke2-proxy-backend bench` again or remove the file", hostfs.BenchFile, errText(err))
		}
		return nil
	}
	rep, err := bench.Parse(data)
	if err != nil {
		p.unreadable("%s: %s: the measured backend costs are unknown; run `rke2-proxy-backend bench` again or remove the file", hostfs.BenchFile, err)
		return nil
	}
	return &Cost{Report: rep, Stale: bench.Stale(rep, kernelRelease, p.root.Stat)}
}
