package costbench

import (
	"context"
	"os"
	"testing"
)

// The test binary doubles as the bench child RunIsolated re-executes.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain(context.Background(), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
