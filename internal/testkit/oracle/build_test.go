package oracle

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestBinaries builds (or finds cached) the oracle of every minor and the
// test API server. `make oracle` runs just this with no timeout before the
// rest of the tests, so a cold build (minutes per minor) never runs under
// go test's default 10 minute limit; afterwards it only checks the cache.
// With ORACLE_GOARCH set to another architecture it builds that
// architecture's oracles instead (the VM tier's arm64 guest runs them), not
// the API server, which only this machine runs.
func TestBinaries(t *testing.T) {
	if goarch := os.Getenv("ORACLE_GOARCH"); goarch != "" && goarch != runtime.GOARCH {
		for _, minor := range Minors {
			t.Run(minor, func(t *testing.T) { checkBuilt(t, minor, func() string { return BinaryFor(t, minor, goarch) }) })
		}
		return
	}
	for _, minor := range Minors {
		t.Run(minor, func(t *testing.T) { checkBuilt(t, minor, func() string { return Binary(t, minor) }) })
	}
	t.Run("apiserver", func(t *testing.T) { checkBuilt(t, "apiserver", func() string { return APIServer(t) }) })
}

func checkBuilt(t *testing.T, name string, build func() string) {
	start := time.Now()
	bin := build()
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
