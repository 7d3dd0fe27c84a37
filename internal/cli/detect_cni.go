package cli

import (
	"fmt"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
)

// cniManifest is a HelmChartConfig the CNI needs for the decided backend:
// its file in RKE2's server manifests directory and its exact content.
type cniManifest struct {
	Chart   string `json:"chart"`
	File    string `json:"file"`
	Content string `json:"content"`
}

// cniManifestName is the file name apply writes for a chart.
func cniManifestName(chart string) string { return chart + "-nftables.yaml" }

// neededCNIManifests renders the HelmChartConfig the CNI still needs when
// kube-proxy goes to nftables (none for other backends, cilium, a CNI RKE2
// does not bundle, or one whose HelmChartConfig already has the values).
func neededCNIManifests(f facts.Facts, d decide.Decision) ([]cniManifest, error) {
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
	return []cniManifest{{Chart: chart, File: path.Join(f.RKE2.ManifestsDir(), cniManifestName(chart)), Content: string(data)}}, nil
}

// detectCNIText is the CNI fact line.
func detectCNIText(s cni.Setup) string {
	if len(s.CNIs) == 0 {
		s = cni.NewSetup(nil, "", nil)
	}
	text := strings.Join(s.CNIs, ", ") + " (" + s.Source + ")"
	if s.NodeLocalDNS != "" {
		text += ", NodeLocal DNSCache on (" + s.NodeLocalDNS + ")"
	}
	return text
}

// writeDetectHost appends the host conflicts and the CNI manifests to
// detect's text output.
func writeDetectHost(b *strings.Builder, conflicts []hostconflict.Finding, manifests []cniManifest) {
	if len(conflicts) > 0 {
		b.WriteString("\nhost conflicts:\n")
		for _, c := range conflicts {
			fmt.Fprintf(b, "  - %s\n", c.Line())
		}
	}
	for _, m := range manifests {
		fmt.Fprintf(b, "\nCNI: kube-proxy runs nftables, so %s must too. Apply this on a server as %s\n(cluster-wide; cni.helmchartconfig: write has apply write it):\n\n%s", m.Chart, m.File, m.Content)
	}
}
