package oracle

import (
	"fmt"
	"os"
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
// build shows its progress instead of minutes of silence.
func TestBinaries(t *testing.T) {
	steps := len(Minors) + 1
	for i, minor := range Minors {
		step := fmt.Sprintf("%d/%d", i+1, steps)
		t.Run(minor, func(t *testing.T) {
			checkBuilt(t, minor, func() (string, error) { return kubeProxyOracle.build(minor, step) })
		})
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
