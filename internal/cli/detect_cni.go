package cli

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
)

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
func writeDetectHost(b *strings.Builder, conflicts []hostconflict.Finding, manifests []apply.CNIManifest) {
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
