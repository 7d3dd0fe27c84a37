package hostfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn does not return in d: a read that blocks
// on a FIFO would otherwise hang the whole test binary.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %s", d)
	}
}

func TestReadFileRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "etc", ".keep"), "")
	if err := syscall.Mkfifo(filepath.Join(dir, "etc", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "etc", "to-fifo")); err != nil {
		t.Fatal(err)
	}
	r := New(dir)
	for _, p := range []string{"/etc/fifo", "/etc/to-fifo"} {
		within(t, 5*time.Second, func() {
			_, err := r.ReadFile(p)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("ReadFile(%s) = %v; want a not-a-regular-file error naming a named pipe", p, err)
			}
		})
	}
	within(t, 5*time.Second, func() {
		if _, err := r.ReadDir("/etc/fifo"); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("ReadDir(fifo) = %v; want an error naming a named pipe", err)
		}
	})
}

func TestReadFileMaxReportsOverCapNeverCuts(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "big"), strings.Repeat("x", 101))
	mustWrite(t, filepath.Join(dir, "fits"), strings.Repeat("x", 100))
	// Under /proc sizes are not trusted, so the read itself must stop.
	mustWrite(t, filepath.Join(dir, "proc", "big"), strings.Repeat("x", 101))
	r := New(dir)
	if data, err := r.ReadFileMax("/fits", 100); err != nil || len(data) != 100 {
		t.Errorf("ReadFileMax(fits) = %d bytes, %v; want 100, nil", len(data), err)
	}
	for _, p := range []string{"/big", "/proc/big"} {
		data, err := r.ReadFileMax(p, 100)
		if !errors.Is(err, ErrTooLarge) || data != nil {
			t.Errorf("ReadFileMax(%s) = %d bytes, %v; want ErrTooLarge and no data", p, len(data), err)
		}
		if err != nil && !strings.Contains(err.Error(), "larger than 100 bytes") {
			t.Errorf("error %q does not name the cap", err)
		}
	}
}

func TestReadFileErrorsNeverHoldContent(t *testing.T) {
	dir := t.TempDir()
	secret := "root:$6$saltsalt$HASHHASHHASH:19000:0:99999:7:::\n"
	mustWrite(t, filepath.Join(dir, "shadow"), strings.Repeat(secret, 100))
	_, err := New(dir).ReadFileMax("/shadow", 64)
	if err == nil || strings.Contains(err.Error(), "HASH") {
		t.Errorf("ReadFileMax over cap = %v; want an error without the file's content", err)
	}
}

func TestReadDirMaxReportsTheCap(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"c", "a", "b", "d"} {
		mustWrite(t, filepath.Join(dir, "d", n), "")
	}
	r := New(dir)
	all, err := r.ReadDir("/d")
	if err != nil || len(all) != 4 || all[0].Name() != "a" || all[3].Name() != "d" {
		t.Fatalf("ReadDir = %v, %v; want a..d sorted", all, err)
	}
	some, err := r.ReadDirMax("/d", 3)
	if !errors.Is(err, ErrTooLarge) || len(some) != 3 {
		t.Errorf("ReadDirMax(3) = %d entries, %v; want 3 and ErrTooLarge", len(some), err)
	}
}

// The direct getdents decoder lists what os.ReadDir lists, with the same
// types, on a fixture holding every kind of entry and on real trees.
func TestReadDirMatchesOSReadDir(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "d", "file"), "x")
	mustWrite(t, filepath.Join(dir, "d", "sub", "x"), "")
	if err := os.Symlink("file", filepath.Join(dir, "d", "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "d", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // more than one getdents buffer
		mustWrite(t, filepath.Join(dir, "d", "many", strings.Repeat("n", 40)+string(rune('a'+i%26))+strings.Repeat("x", i%7)+"-"+itoa(i)), "")
	}
	for _, p := range []string{filepath.Join(dir, "d"), filepath.Join(dir, "d", "many"), "/sys/bus", "/etc", "/proc/self"} {
		want, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		got, err := New("/").ReadDir(p)
		if err != nil {
			t.Fatalf("ReadDir(%s): %v", p, err)
		}
		if len(got) != len(want) {
			t.Fatalf("ReadDir(%s): %d entries, os.ReadDir %d", p, len(got), len(want))
		}
		for i := range want {
			if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
				t.Errorf("ReadDir(%s)[%d] = %s %v, os.ReadDir %s %v", p, i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
