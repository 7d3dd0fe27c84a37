package generator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Where there is no /dev/kmsg (a container), the line must still reach
// someone: the journal when journald listens, else stderr.
func TestLoggerFallsBackWithoutKmsg(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-kmsg")
	var stderr bytes.Buffer
	l := openLogger(true, missing, func() bool { return false }, &stderr)
	l.Error("config broken")
	if l.Sink() != "stderr" || stderr.String() != Name+": error: config broken\n" {
		t.Errorf("sink %s, stderr %q", l.Sink(), stderr.String())
	}
	if l := openLogger(true, missing, func() bool { return true }, &stderr); l.Sink() != "journal" {
		t.Errorf("no kmsg, journald listening: sink %s, want journal", l.Sink())
	}

	kmsg := filepath.Join(t.TempDir(), "kmsg")
	if err := os.WriteFile(kmsg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l = openLogger(true, kmsg, func() bool { return true }, &stderr)
	l.Warn("two\nlines")
	l.Close()
	got, _ := os.ReadFile(kmsg)
	if l.Sink() != "kmsg" || string(got) != "<4>"+Name+": two lines\n" {
		t.Errorf("sink %s, kmsg %q", l.Sink(), got)
	}
	if l := openLogger(false, kmsg, func() bool { return true }, &stderr); l.Sink() != "stderr" {
		t.Errorf("--root run: sink %s, want stderr", l.Sink())
	}
	if strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr got more than the one line: %q", stderr.String())
	}
}
