package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// HelmChartConfigMode is the mode of the HelmChartConfigs apply writes:
// RKE2's manifests are not secret, and RKE2 writes its own 0600; ours
// follow.
const HelmChartConfigMode = 0o600

// WriteHelmChartConfig writes a CNI HelmChartConfig (cni.RenderChartConfig's
// output) into RKE2's server manifests directory, atomically. A file at
// that path without our header is the operator's and is left as it is, and
// so is the chart when the operator already has a HelmChartConfig for it
// (operatorFiles): two manifests for one HelmChartConfig name replace each
// other in the cluster, so ours would wipe the operator's other values.
func WriteHelmChartConfig(o Options, hostPath, chart string, operatorFiles []string, data []byte) error {
	if len(operatorFiles) > 0 {
		return fmt.Errorf("%s already has a HelmChartConfig you wrote (%s): add the nftables values there; %s is not written", chart, operatorFiles[0], o.Root.Path(hostPath))
	}
	old, err := o.Root.ReadFileMax(hostPath, hostfs.MaxTextFile)
	switch {
	case err == nil && !cni.IsGenerated(old):
		return fmt.Errorf("%s was not written by rke2-proxy-backend (no %q header): it is the operator's and is never replaced", o.Root.Path(hostPath), cni.GeneratedHeader)
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cannot tell who owns %s: %w; it is left as it is", o.Root.Path(hostPath), err)
	}
	o.log("[started]  writing %s", o.Root.Path(hostPath))
	changed, err := o.Root.WriteFileAtomic(hostPath, data, HelmChartConfigMode)
	if err != nil {
		o.log("[failed]   writing %s: %v", o.Root.Path(hostPath), err)
		return fmt.Errorf("write %s's HelmChartConfig: %w", chart, err)
	}
	o.log("[finished] writing %s (%s)", o.Root.Path(hostPath), changedWord(changed))
	return nil
}
