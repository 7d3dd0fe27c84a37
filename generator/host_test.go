package generator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Without a Decider the generator decides for its host itself: the config
// file it is given (only a non-default one is passed on to apply and
// verify) and its environment reach the drop-ins.
func TestGeneratorDecidesForItsHost(t *testing.T) {
	const other = "/srv/proxy-backend.yaml"
	for _, c := range []struct {
		name, configFile string
		environ          []string
		apply            string
	}{
		{name: "defaults", apply: "apply --backend=iptables-nft\n"},
		{name: "default file named", configFile: hostfs.ConfigFile, apply: "apply --backend=iptables-nft\n"},
		{name: "other file", configFile: other, apply: "apply --backend=iptables-legacy --config=" + other + "\n"},
		{name: "environment", environ: []string{"RKE2_PROXY_BACKEND=iptables-legacy"}, apply: "apply --backend=iptables-legacy\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").File(other, "backend: iptables-legacy\n")
			normal := testhost.GeneratorDirs(t)[0]
			var log bytes.Buffer
			out, err := Run(Options{Root: h.Root(), Dirs: []string{normal},
				ConfigFile: c.configFile, Environ: c.environ, Log: NewLogger(&log)})
			if out != Wrote || err != nil {
				t.Fatalf("outcome %s, %v\n%s", out, err, log.String())
			}
			data, err := os.ReadFile(filepath.Join(normal, "rke2-server.service.d", "50-rke2-proxy-backend.conf"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), c.apply) {
				t.Errorf("drop-in lacks %q:\n%s", c.apply, data)
			}
		})
	}
}
