package cli

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
)

// The census's exit status is its verdict: a namespace it could not read
// is never a pass.
func TestCensusExit(t *testing.T) {
	for verdict, want := range map[string]int{census.Yes: ExitOK, census.No: ExitFailure, census.Unknown: ExitCannotTell, "": ExitCannotTell} {
		got := ExitOK
		if err := censusExit(verdict); err != nil {
			got = exitCode(err)
		}
		if got != want {
			t.Errorf("verdict %q: exit %d, want %d", verdict, got, want)
		}
	}
}

// Under --root the census would read this machine's namespaces, not the
// root's: refused as a usage error, as is a negative bound.
func TestCensusRefuses(t *testing.T) {
	for _, args := range [][]string{{"--root", t.TempDir(), "census"}, {"census", "--max-namespaces", "-1"}} {
		var stdout, stderr strings.Builder
		if code := Main(append([]string{"rke2-proxy-backend"}, args...), &stdout, &stderr); code != ExitUsage || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, output %q; want %d and none\n%s", args, code, stdout.String(), ExitUsage, stderr.String())
		}
	}
}
