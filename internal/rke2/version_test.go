package rke2

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]KubeVersion{
		"v1.31.2+rke2r1":              {1, 31, 2},
		"v1.31.2-rke2r1-0a1b2c3d4e5f": {1, 31, 2},
		"v1.34.10+rke2r2":             {1, 34, 10},
		"v1.31":                       {1, 31, -1},
		"1.30.4":                      {1, 30, 4},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "v", "v1", "rke2r1", "v1.31.2rke2", "v0.1.0", "latest", "v1.31.x", "v99999.1"} {
		if got, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestKubeVersionString(t *testing.T) {
	for v, want := range map[KubeVersion]string{{1, 31, 2}: "v1.31.2", {1, 31, -1}: "v1.31", {}: ""} {
		if got := v.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", v, got, want)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"v1.31.2+rke2r1", "v1.31.2-rke2r1-abc123", "v1.31", "", "v1.2.3.4", "v01.002", "1.0+\n"} {
		f.Add(s)
	}
	oracle := regexp.MustCompile(`^v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?(?:[-+].*)?$`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		// The hand-written parser accepts exactly what this regexp does,
		// with the same numbers.
		m := oracle.FindStringSubmatch(s)
		if m == nil {
			if err == nil {
				t.Fatalf("ParseVersion(%q) = %+v; the regexp does not match", s, v)
			}
		} else if m[1] != strings.Repeat("0", len(m[1])) {
			major, _ := strconv.Atoi(m[1])
			minor, _ := strconv.Atoi(m[2])
			patch := -1
			if m[3] != "" {
				patch, _ = strconv.Atoi(m[3])
			}
			if err != nil || v != (KubeVersion{major, minor, patch}) {
				t.Fatalf("ParseVersion(%q) = %+v, %v; the regexp reads %q", s, v, err, m)
			}
		}
		if err != nil {
			if v.Known() {
				t.Fatalf("error %v with a known version %+v", err, v)
			}
			return
		}
		if !v.Known() || v.Minor < 0 || v.Patch < -1 {
			t.Fatalf("ParseVersion(%q) = %+v", s, v)
		}
		// Rendering and parsing again gives the same version.
		again, err := ParseVersion(v.String())
		if err != nil || again != v {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, v, v.String(), again, err)
		}
	})
}
