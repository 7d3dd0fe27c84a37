package facts

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// askBinary leaves a working binary room on a loaded machine; killBinary is
// the short limit for binaries that must be ended at it.
var (
	askBinary  = Options{RKE2Binary: true, RKE2BinaryTimeout: 10 * time.Second}
	killBinary = Options{RKE2Binary: true, RKE2BinaryTimeout: 500 * time.Millisecond}
)

// First start: no data directory yet, and the binary each install method
// puts where its unit's ExecStart points tells the version.
func TestProbeAsksTheBinaryTheUnitRuns(t *testing.T) {
	for layout, bin := range map[string]string{"tarball": "/usr/local/bin/rke2", "opt": "/opt/rke2/bin/rke2", "rpm": "/usr/bin/rke2"} {
		h := testhost.New(t).RKE2Unit(layout, "server").RKE2Binary(bin, "v1.33.5+rke2r1")
		f := Probe(h.Root(), askBinary)
		if f.RKE2.Version != "v1.33.5+rke2r1" || f.RKE2.VersionSource != bin+" --version" ||
			f.RKE2.Kubernetes != (rke2.KubeVersion{Major: 1, Minor: 33, Patch: 5}) {
			t.Errorf("%s: version %q from %q (%+v)", layout, f.RKE2.Version, f.RKE2.VersionSource, f.RKE2.Kubernetes)
		}
		if joined := strings.Join(append(f.Problems, f.Unreadable...), "\n"); strings.Contains(joined, "RKE2 runtime") || strings.Contains(joined, "rke2 --version") {
			t.Errorf("%s: a sentence about the version although the binary told it:\n%s", layout, joined)
		}
		// The generator's probe runs nothing.
		if f := Probe(h.Root(), Options{}); f.RKE2.Version != "" {
			t.Errorf("%s: the generator's probe learned %q without a data directory", layout, f.RKE2.Version)
		}
	}
}

// Right after an upgrade the data directory still holds the old release:
// the binary wins and the source says why.
func TestProbeBinaryWinsOverAnOldDataDir(t *testing.T) {
	h := testhost.New(t).RKE2Unit("tarball", "server").RKE2Version("v1.31.2+rke2r1").
		RKE2Binary("/usr/local/bin/rke2", "v1.32.3+rke2r1")
	f := Probe(h.Root(), askBinary)
	if f.RKE2.Version != "v1.32.3+rke2r1" {
		t.Errorf("version %q, want the binary's", f.RKE2.Version)
	}
	for _, want := range []string{"/usr/local/bin/rke2 --version (the binary the unit runs", "holds v1.31.2+rke2r1, left by the release that ran before"} {
		if !strings.Contains(f.RKE2.VersionSource, want) {
			t.Errorf("source %q lacks %q", f.RKE2.VersionSource, want)
		}
	}
}

// A binary that hangs is ended at the limit, one that prints garbage is
// not believed, and neither is quoted; both fall back to the data dir.
func TestProbeBadBinaryFallsBackToTheDataDir(t *testing.T) {
	for name, script := range map[string]string{
		"hangs":   "#!/bin/sh\nsleep 60 &\nexec sleep 60\n",
		"garbage": "#!/bin/sh\necho 'root:$6$HASHHASH:19700:0:99999:7:::'\n",
		"fails":   "#!/bin/sh\necho 'root:$6$HASHHASH' >&2\nexit 3\n",
		"flood":   "#!/bin/sh\nexec cat /dev/zero\n",
	} {
		h := testhost.New(t).RKE2Unit("tarball", "server").RKE2Version("v1.31.2+rke2r1").
			Executable("/usr/local/bin/rke2", script)
		start := time.Now()
		f := Probe(h.Root(), killBinary)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: probe took %s with a 500ms limit", name, took)
		}
		if f.RKE2.Version != "v1.31.2+rke2r1" {
			t.Errorf("%s: version %q, want the data directory's", name, f.RKE2.Version)
		}
		joined := strings.Join(f.Unreadable, "\n")
		if !strings.Contains(joined, "/usr/local/bin/rke2 --version (the binary rke2-server.service runs)") || strings.Contains(joined, "HASH") {
			t.Errorf("%s: unreadable %q; want the binary named and nothing it printed", name, joined)
		}
		if name == "hangs" && !strings.Contains(joined, "did not finish within 500ms") {
			t.Errorf("hangs: %q does not say it was killed", joined)
		}
	}
}
