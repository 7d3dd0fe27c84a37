package hostplan

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Capable is what a host can run whatever its config prefers: bench
// measures every backend the kernel and userspace allow, so the record
// serves auto's later choices and detect's cost line under any config.
type Capable struct {
	// Kernel is the running kernel's release (bench records it, and the
	// figures turn stale when it changes).
	Kernel string
	// Runnable are the backends the facts do not rule out, in
	// backend.All's order; Unrunnable says why each of the others is out.
	Runnable   []backend.Backend
	Unrunnable map[backend.Backend]string
}

// ProbeCapable probes root with the generator's probe (no programs run,
// no config read) and judges what it can run, as decide.Runnable does.
func ProbeCapable(root hostfs.Root, kind distro.Kind) Capable {
	probe := Boot
	probe.Distribution = kind
	f := facts.Probe(root, probe)
	runnable, not := decide.Runnable(f)
	return Capable{Kernel: f.Kernel.Release, Runnable: runnable, Unrunnable: not}
}
