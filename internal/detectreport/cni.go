package detectreport

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
)

// cniText is the CNI fact line.
func cniText(s cni.Setup) string {
	if len(s.CNIs) == 0 {
		s = cni.NewSetup(nil, "", nil)
	}
	text := strings.Join(s.CNIs, ", ") + " (" + s.Source + ")"
	if s.NodeLocalDNS != "" {
		text += ", NodeLocal DNSCache on (" + s.NodeLocalDNS + ")"
	}
	return text
}

// writeHost appends the host conflicts and the CNI manifests to the text.
func (r Report) writeHost(b *strings.Builder) {
	if len(r.Conflicts) > 0 {
		b.WriteString("\nhost conflicts:\n")
		for _, c := range r.Conflicts {
			fmt.Fprintf(b, "  - %s\n", c.Line())
		}
	}
	for _, m := range r.Manifests {
		fmt.Fprintf(b, "\nCNI: kube-proxy runs nftables, so %s must too. Apply this on a server as %s\n(cluster-wide; cni.helmchartconfig: write has apply write it):\n\n%s", m.Chart, m.File, m.Content)
	}
}
