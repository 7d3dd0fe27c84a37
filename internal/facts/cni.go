package facts

import (
	"bytes"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// ServerManifestsDir is where RKE2 servers pick up manifests, relative to
// RKE2's data-dir: the bundled charts and the operator's HelmChartConfigs.
const ServerManifestsDir = "server/manifests"

// maxManifests bounds the manifest files read; a node has a few dozen.
const maxManifests = 1024

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

func (p *probe) chartConfigs(dir string) []cni.ChartConfig {
	entries, err := p.root.ReadDirMax(dir, maxManifests)
	if err != nil {
		if !isNotExist(err) {
			p.unreadable("%s: %s: the CNI's HelmChartConfigs are unknown; check the directory", dir, errText(err))
		}
		return nil
	}
	var out []cni.ChartConfig
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		file := path.Join(dir, e.Name())
		data, ok := p.read(file, "the CNI settings in it are unknown")
		// Most files there are RKE2's own HelmCharts: skip the YAML parse.
		if !ok || !bytes.Contains(data, []byte(cni.Kind)) {
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
