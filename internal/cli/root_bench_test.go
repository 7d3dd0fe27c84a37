package cli

import (
	"io"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli/help"
)

// The generator builds the command tree on every boot and daemon-reload;
// these show what the tree costs, and what completion registration would
// add if it were not left to __complete requests.
func BenchmarkNewRootCommand(b *testing.B) {
	for b.Loop() {
		NewRootCommand(io.Discard, io.Discard)
	}
}

func BenchmarkNewRootCommandWithCompletions(b *testing.B) {
	for b.Loop() {
		help.Completions(NewRootCommand(io.Discard, io.Discard))
	}
}
