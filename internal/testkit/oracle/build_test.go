package oracle

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestBinaries builds (or finds cached) the oracle of every minor and the
// test API server. `make oracle` runs just this with no timeout before the
// rest of the tests, so a cold build (minutes per minor) never runs under
// go test's default 10 minute limit; afterwards it only checks the cache.
//
// Each build says which it is and how many there are ("3/6") and reports
// while it runs (runReported): make oracle runs this with -v, so a cold
// build shows its progress instead of minutes of silence. With
// ORACLE_GOARCH set to another architecture it builds that architecture's
// oracles instead (the VM tier's arm64 guest runs them), not the API
// server, which only this machine runs.
func TestBinaries(t *testing.T) {
	goarch := os.Getenv("ORACLE_GOARCH")
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	steps := len(Minors) + 1
	if goarch != runtime.GOARCH {
		steps = len(Minors)
	}
	for i, minor := range Minors {
		step := fmt.Sprintf("%d/%d", i+1, steps)
		t.Run(minor, func(t *testing.T) {
			checkBuilt(t, minor, func() (string, error) { return kubeProxyOracle.buildFor(minor, goarch, step) })
		})
	}
	if goarch != runtime.GOARCH {
		return
	}
	step := fmt.Sprintf("%d/%d", steps, steps)
	t.Run("apiserver", func(t *testing.T) {
		checkBuilt(t, "apiserver", func() (string, error) { return apiServer.build(APIServerMinor, step) })
	})
}

func checkBuilt(t *testing.T, name string, build func() (string, error)) {
	start := time.Now()
	bin, err := build()
	if err != nil {
		t.Fatalf("building %s: %v", name, err)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 == 0 {
		t.Fatalf("%s is not executable", bin)
	}
	// packaging/test/boot.sh reads the oracle's path from this line.
	t.Logf("binary %s %s (%d MiB) in %s", name, bin, st.Size()>>20, time.Since(start).Round(time.Second))
}
