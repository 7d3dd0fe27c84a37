package switchover

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// flannelTables is what flanneld with EnableNFTables writes: a table per
// family, flannel-ipv4 and flannel-ipv6 (flannel-io/flannel
// pkg/trafficmngr/nftables/nftables.go initTable).
const flannelTables = "table ip flannel-ipv4 { comment \"rules for flannel-ipv4\"; }\ntable ip6 flannel-ipv6 { comment \"rules for flannel-ipv6\"; }\n"

// The switch judges the node as verify does, CNI included: kube-proxy
// complete in iptables-nft next to flannel's own nftables tables (flannel
// left on enableNFTables) fails the verify step, with the fix for the
// chart RKE2's config runs (rke2-flannel), so the switch rolls back
// rather than leave pods reaching some Services and not others.
func TestLiveVerifierJudgesTheCNIInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	h := testhost.New(t).RKE2Unit("tarball", "server").RKE2Config("config.yaml", "cni: flannel\n")
	if err := loadKubeProxy(backend.IptablesNFT); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nstest.Tool(t, "nft"), "-f", "-")
	cmd.Stdin = strings.NewReader(flannelTables)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v\n%s", err, out)
	}
	res, err := LiveVerifier{Root: h.Root(), Wait: time.Second, Poll: 100 * time.Millisecond}.Verify(context.Background(), backend.IptablesNFT)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	verify.WriteText(&text, res)
	if res.OK || res.ExpectSource != "switch" || len(res.Findings) != 1 || res.Findings[0].Kind != verify.KindCNIOtherBackend ||
		res.Findings[0].Backend != backend.NFTables || !strings.Contains(res.Findings[0].Fix, "in a HelmChartConfig for rke2-flannel set flannel.enableNFTables: false") {
		t.Fatalf("want one cni-other-backend finding in nftables naming rke2-flannel's value, from the switch:\n%s", text.String())
	}
}
