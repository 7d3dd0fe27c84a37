package generator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Where there is no /dev/kmsg (a container), the line must still reach
// someone: the journal when journald listens, else stderr.
func TestLoggerFallsBackWithoutKmsg(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-kmsg")
	var stderr bytes.Buffer
	l := openLogger(true, missing, filepath.Join(t.TempDir(), "no-journal"), &stderr)
	l.Error("config broken")
	if l.Sink() != "stderr" || stderr.String() != Name+": error: config broken\n" {
		t.Errorf("sink %s, stderr %q", l.Sink(), stderr.String())
	}
	journal := listenJournal(t)
	l = openLogger(true, missing, journal.path, &stderr)
	l.Warn("refused %s;\tsee\n%s", "backend: nftables", "the kernel")
	l.Close()
	if l.Sink() != "journal" {
		t.Errorf("no kmsg, journald listening: sink %s, want journal", l.Sink())
	}
	if got, want := journal.record(t), "PRIORITY=4\nSYSLOG_IDENTIFIER="+Name+"\nMESSAGE=refused backend: nftables; see the kernel\n"; got != want {
		t.Errorf("journal record %q, want %q", got, want)
	}

	kmsg := filepath.Join(t.TempDir(), "kmsg")
	if err := os.WriteFile(kmsg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l = openLogger(true, kmsg, journal.path, &stderr)
	l.Warn("two\nlines")
	l.Close()
	got, _ := os.ReadFile(kmsg)
	if l.Sink() != "kmsg" || string(got) != "<4>"+Name+": two lines\n" {
		t.Errorf("sink %s, kmsg %q", l.Sink(), got)
	}
	if l := openLogger(false, kmsg, journal.path, &stderr); l.Sink() != "stderr" {
		t.Errorf("--root run: sink %s, want stderr", l.Sink())
	}
	if strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr got more than the one line: %q", stderr.String())
	}
}

// fakeJournal is a datagram socket where journald's would be: what the
// generator sends is read back as journald would receive it.
type fakeJournal struct {
	path string
	fd   int
}

func listenJournal(t *testing.T) fakeJournal {
	t.Helper()
	j := fakeJournal{path: filepath.Join(t.TempDir(), "socket")}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: j.path}); err != nil {
		t.Fatal(err)
	}
	j.fd = fd
	return j
}

// record is the one datagram sent, without waiting for one.
func (j fakeJournal) record(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, _, err := syscall.Recvfrom(j.fd, buf, syscall.MSG_DONTWAIT)
	if err != nil {
		t.Fatalf("no record reached the journal's socket: %v", err)
	}
	return string(buf[:n])
}
