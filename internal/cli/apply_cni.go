package cli

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// writeCNIManifests carries out cni.helmchartconfig: write on a server: the
// HelmChartConfig the CNI still needs for nftables mode goes into RKE2's
// server manifests directory, where RKE2 applies it cluster-wide. A
// failure is a warning: kube-proxy's own setup is done, and the operator
// can apply the manifest detect prints.
func writeCNIManifests(o apply.Options, f facts.Facts, cfg config.Config, d decide.Decision, logf func(string, ...any)) {
	if cfg.CNI.HelmChartConfig != config.CNIWrite || !isServer(f) {
		return
	}
	manifests, err := neededCNIManifests(f, d)
	if err != nil {
		logf("warning: %v", err)
		return
	}
	for _, m := range manifests {
		var operators []string
		for _, c := range f.RKE2.CNI.Charts {
			if c.Chart == m.Chart && !c.Generated {
				operators = append(operators, c.File)
			}
		}
		if err := apply.WriteHelmChartConfig(o, m.File, m.Chart, operators, []byte(m.Content)); err != nil {
			logf("warning: %v", err)
		}
	}
}

// isServer reports whether this node runs rke2-server: agents have no
// manifests directory RKE2 reads.
func isServer(f facts.Facts) bool {
	for _, u := range f.RKE2.Units {
		if u.Role == "server" {
			return true
		}
	}
	return false
}
