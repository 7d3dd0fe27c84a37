package apply

import (
	"path"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// CNIManifest is a HelmChartConfig the CNI needs for the decided backend:
// its file in RKE2's server manifests directory and its exact content
// (detect prints it, apply writes it under cni.helmchartconfig: write).
type CNIManifest struct {
	Chart   string `json:"chart"`
	File    string `json:"file"`
	Content string `json:"content"`
}

// cniManifestName is the file name apply writes for a chart.
func cniManifestName(chart string) string { return chart + "-nftables.yaml" }

// CNIManifests renders the HelmChartConfig the CNI still needs when
// kube-proxy goes to nftables (none for other backends, cilium, a CNI RKE2
// does not bundle, or one whose HelmChartConfig already has the values).
func CNIManifests(f facts.Facts, d decide.Decision) ([]CNIManifest, error) {
	if d.Disabled || d.Backend != backend.NFTables {
		return nil, nil
	}
	setup := f.RKE2.CNI
	if len(setup.CNIs) == 0 {
		setup = cni.NewSetup(nil, "", nil)
	}
	follow := setup.NFTables()
	if follow.Refuse || follow.Unconfirmed || len(follow.Missing) == 0 {
		return nil, nil
	}
	chart, values, _ := cni.NFTablesValues(setup.Primary)
	data, err := cni.RenderChartConfig(chart, values)
	if err != nil {
		return nil, err
	}
	return []CNIManifest{{Chart: chart, File: path.Join(f.RKE2.ManifestsDir(), cniManifestName(chart)), Content: string(data)}}, nil
}

// writeCNIManifests carries out cni.helmchartconfig: write on a server: the
// HelmChartConfig the CNI still needs for nftables mode goes into RKE2's
// server manifests directory, where RKE2 applies it cluster-wide. A
// failure is a warning: kube-proxy's own setup is done, and the operator
// can apply the manifest detect prints.
func writeCNIManifests(o Options, f facts.Facts, cfg config.Config, d decide.Decision, logf func(string, ...any)) {
	if cfg.CNI.HelmChartConfig != config.CNIWrite || !isServer(f) {
		return
	}
	manifests, err := CNIManifests(f, d)
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
		if err := WriteHelmChartConfig(o, m.File, m.Chart, operators, []byte(m.Content)); err != nil {
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
