package facts

import (
	"bytes"
	"path"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// ServerManifestsDir is where RKE2 servers pick up manifests, relative to
// RKE2's data-dir: the bundled charts and the operator's HelmChartConfigs.
const ServerManifestsDir = "server/manifests"

// ReadCNI reads which CNI RKE2 runs on the host under root and how its
// charts are set, without the rest of the probe: verify needs it to name
// the one CNI that runs, and the chart value that moves its rules. The
// second value lists what could not be read (each a sentence naming the
// file and what to do), so the setup may be RKE2's default for want of a
// config.
func ReadCNI(root hostfs.Root) (cni.Setup, []string) {
	p := &probe{root: root}
	r := p.rke2Config()
	return p.cniSetup(r.Config, r.DataDir), p.f.Unreadable
}

// cniSetup reads RKE2's `cni:` key and the HelmChartConfigs in the server
// manifests directory. Agents have no manifests directory: the HelmChart-
// Configs live on the servers, so an agent sees only its cni: key.
func (p *probe) cniSetup(eff rke2.Effective, dataDir string) cni.Setup {
	values := eff.Strings("cni")
	file := eff.Origin["cni"]
	if from := eff.ItemOrigin["cni"]; len(from) > 0 {
		file = from[len(from)-1]
	}
	dir := path.Join(dataDir, ServerManifestsDir)
	return cni.NewSetup(values, file, p.chartConfigs(dir))
}

// chartConfigs reads the HelmChartConfigs in every manifest RKE2 applies
// from dir (manifestFiles), in the order it applies them.
func (p *probe) chartConfigs(dir string) []cni.ChartConfig {
	var out []cni.ChartConfig
	for _, file := range p.manifestFiles(dir) {
		data, ok := p.read(file, "the CNI settings in it are unknown")
		// Most files there are RKE2's own HelmCharts: skip the YAML parse
		// unless the kind is named (or could be, in a JSON escape).
		if !ok || !bytes.Contains(data, []byte(cni.Kind)) && !bytes.Contains(data, []byte(`\u`)) {
			continue
		}
		charts, err := cni.ParseChartConfigs(file, data)
		if err != nil {
			p.unreadable("%v", err)
		}
		out = append(out, charts...)
	}
	return out
}

// ManifestsDir is RKE2's server manifests directory on this node.
func (r RKE2) ManifestsDir() string {
	dataDir := r.DataDir
	if dataDir == "" {
		dataDir = hostfs.RKE2DataDir
	}
	return path.Join(dataDir, ServerManifestsDir)
}
