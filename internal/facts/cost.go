package facts

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/costbench/costfile"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Cost is bench's last measurement of each backend's rule-load cost on
// this node (hostfs.BenchFile), and whether it still describes the node.
type Cost struct {
	costfile.Report
	// Stale says why the figures no longer hold ("" while they do): another
	// kernel, or a loader binary replaced since. Measure again with bench.
	Stale string `json:"stale,omitempty"`
}

// cost reads the bench result, bounded like every read (a regular file of
// at most costfile.MaxSize bytes). No file is the normal case: nothing was
// measured, and nothing is said.
func (p *probe) cost(kernelRelease string) *Cost {
	data, err := p.readBounded(hostfs.BenchFile, costfile.MaxSize)
	if err != nil {
		if !isNotExist(err) {
			p.unreadable("%s: %s: the measured backend costs are unknown; run `rke2-proxy-backend bench` again or remove the file", hostfs.BenchFile, errText(err))
		}
		return nil
	}
	rep, err := costfile.Parse(data)
	if err != nil {
		p.unreadable("%s: %s: the measured backend costs are unknown; run `rke2-proxy-backend bench` again or remove the file", hostfs.BenchFile, err)
		return nil
	}
	return &Cost{Report: rep, Stale: costfile.Stale(rep, kernelRelease, p.root.Stat)}
}

// readBounded reads a regular host file of at most limit bytes.
func (p *probe) readBounded(hostPath string, limit int64) ([]byte, error) {
	path, err := p.root.Resolve(hostPath)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}
