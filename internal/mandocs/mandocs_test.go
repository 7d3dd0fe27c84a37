package mandocs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
)

func TestWriteDocs(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	gen := func() string {
		dir := t.TempDir()
		if err := Write(cli.NewRootCommand(io.Discard, io.Discard), dir, date); err != nil {
			t.Fatalf("writeDocs: %v", err)
		}
		return dir
	}
	a, b := gen(), gen()

	for _, rel := range []string{
		"man1/rke2-proxy-backend.1",
		"man1/rke2-proxy-backend-version.1",
		"completions/" + BashCompletionFile,
		"completions/" + ZshCompletionFile,
		"completions/" + FishCompletionFile,
	} {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			t.Fatalf("expected %s: %v", rel, err)
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same date: packages would not be reproducible", rel)
		}
	}

	top, _ := os.ReadFile(filepath.Join(a, "man1", "rke2-proxy-backend.1"))
	if !strings.Contains(string(top), "Jan 2026") {
		t.Errorf("man page does not carry the given date:\n%s", top)
	}
	if strings.Contains(string(top), "Auto generated") {
		t.Error("man page carries cobra's auto-generated tag with a build date")
	}
}

func TestDocsDateFromSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	d, err := DateFromEnv()
	if err != nil || d.Unix() != 1700000000 {
		t.Fatalf("DateFromEnv() = %v, %v; want 1700000000", d, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := DateFromEnv(); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Fatalf("bad SOURCE_DATE_EPOCH: got %v, want an error naming it", err)
	}
}
