package generator

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// An explicit backend the kernel cannot run is refused in the generator's
// log (CONTRACT point 2): a warning naming the setting, the module the
// kernel lacks and the backend that would work, worded for on_failure.
// The boot goes on and apply is wired in, so apply can judge on_failure.
func TestGeneratorRefusesWhatTheKernelCannotRun(t *testing.T) {
	for _, c := range []struct{ onFailure, want string }{
		{"warn", "with on_failure: warn, RKE2 starts on it and apply warns until the setting is changed (set the backend to iptables-legacy, or on_failure: block to stop RKE2 instead)"},
		{"block", "with on_failure: block, apply keeps RKE2 from starting until the setting is changed (set the backend to iptables-legacy, or remove it)"},
	} {
		t.Run(c.onFailure, func(t *testing.T) {
			h := testhost.New(t).DebianCloudNode().DeleteModules("nf_tables").RKE2Unit("tarball", "server").
				File(hostfs.ConfigFile, "backend: iptables-nft\non_failure: "+c.onFailure+"\n")
			root := h.Root()
			out, files, log := runGen(t, root, nil, func() (hostplan.Plan, error) {
				return hostplan.Load(hostplan.Host{Root: root}, hostplan.Boot)
			})
			if out != Wrote || !strings.Contains(files["rke2-server.service.d/50-rke2-proxy-backend.conf"], "apply --backend=iptables-legacy") {
				t.Fatalf("outcome %s, files %q: apply must be wired in", out, files)
			}
			want := "rke2-proxy-backend-generator: warning: refused backend: iptables-nft in " + hostfs.ConfigFile +
				": the kernel has no nf_tables module: CONFIG_NF_TABLES=m in /boot/config-" + testhost.DebianCloudRelease +
				", but /lib/modules/" + testhost.DebianCloudRelease + "/modules.dep does not list it"
			if !strings.Contains(log, want) || !strings.Contains(log, "; iptables-legacy would work") || !strings.Contains(log, c.want) {
				t.Errorf("log lacks the refusal (%q, then %q):\n%s", want, c.want, log)
			}
		})
	}
}
