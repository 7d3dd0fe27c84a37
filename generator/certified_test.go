package generator

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// At the machine's first boot the generator says, once and plainly, where
// the machine differs from its image's certificate; on later boots it
// leaves that to detect; systemd before 251 does not say which boot it is,
// and then the line is logged rather than lost.
func TestGeneratorSaysTheMachineDiffersFromItsCertificate(t *testing.T) {
	data, _ := certified.Marshal(certified.Record{Verdict: certified.Runnable, Backend: "iptables-nft",
		Kernel: certified.Kernel{Release: "6.1.0-9-cloud-amd64", Modules: []string{"nf_tables"}}})
	h := testhost.New(t).DebianCloudNode().RKE2Unit("tarball", "server").File(certified.File, string(data))
	root := h.Root()
	want := "warning: This machine differs from what its image was certified for (" + certified.File + ": runnable, iptables-nft): it boots kernel " + testhost.DebianCloudRelease + ", the image was certified for 6.1.0-9-cloud-amd64."
	for env, logged := range map[string]bool{"1": true, "0": false, "": true} {
		environ := map[string]string{}
		if env != "" {
			environ["SYSTEMD_FIRST_BOOT"] = env
		}
		out, _, log := runGen(t, root, environ, func() (hostplan.Plan, error) {
			return hostplan.Load(hostplan.Host{Root: root}, hostplan.Boot)
		})
		if out != Wrote {
			t.Fatalf("SYSTEMD_FIRST_BOOT=%q: outcome %s:\n%s", env, out, log)
		}
		if got := strings.Count(log, want); got != map[bool]int{true: 1, false: 0}[logged] {
			t.Errorf("SYSTEMD_FIRST_BOOT=%q: the notice appears %d times, want logged=%v:\n%s", env, got, logged, log)
		}
	}
}
