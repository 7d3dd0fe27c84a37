package hostfs

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	mustWrite(t, file, "not a host")
	for _, tc := range []struct {
		dir, want string // want "" is no error
	}{
		{"/", ""},
		{dir, ""},
		{filepath.Join(dir, "nope"), "no such directory: fix the path to the host root to read"},
		{"", "no such directory"},
		{file, "not a directory: --root names the directory a host's files are under"},
		// Through a file, stat fails with ENOTDIR: stat's own words.
		{filepath.Join(file, "sub"), "stat " + filepath.Join(file, "sub") + ": not a directory"},
	} {
		err := CheckRoot(tc.dir)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckRoot(%q) = %v; want an error containing %q", tc.dir, err, tc.want)
		}
		if err != nil && tc.dir != "" && !strings.HasPrefix(err.Error(), "stat ") && strings.Contains(err.Error(), tc.dir) {
			t.Errorf("CheckRoot(%q) = %v: names the path, which its caller does with the setting's name", tc.dir, err)
		}
	}
}
