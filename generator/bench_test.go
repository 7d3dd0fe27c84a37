package generator_test

import (
	"io"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
)

// BenchmarkGeneratorThisHost is one generator run on this machine's own
// root, in-process, for profiles (go test -bench GeneratorThisHost
// -cpuprofile): the process start and Go runtime init it leaves out are
// what bench/generator.sh adds, paired against systemd-getty-generator.
func BenchmarkGeneratorThisHost(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("RKE2_PROXY_BACKEND_ROOT", "/")
	for b.Loop() {
		if rc := cli.Main([]string{"rke2-proxy-backend-generator", dir, dir, dir}, io.Discard, io.Discard); rc != 0 {
			b.Fatalf("exit %d", rc)
		}
	}
}
