package cli

import (
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
