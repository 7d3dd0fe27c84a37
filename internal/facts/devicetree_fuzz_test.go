package facts

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseDeviceTreeStrings: the strings taken are the input's non-empty
// NUL-separated entries, each printable text, in order; input that is not
// all printable text and NULs gives none and an error.
func FuzzParseDeviceTreeStrings(f *testing.F) {
	for _, s := range []string{"synology,ds418\x00realtek,rtd1296\x00", "linux,dummy-virt\x00", "Synology DS418\x00", "", "\x00\x00", "a\x00\x00b", "\x01\x02\x03\x04", "no nul"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseDeviceTreeStrings(data)
		printable := true
		for _, c := range data {
			if c != 0 && (c < 0x20 || c > 0x7e) {
				printable = false
			}
		}
		if !printable {
			if err == nil || got != nil {
				t.Fatalf("%q: %q, %v; want an error and nothing", data, got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		var want []string
		for _, part := range bytes.Split(data, []byte{0}) {
			if len(part) > 0 {
				want = append(want, string(part))
			}
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", data, got, want)
		}
	})
}

// FuzzCompareReleases: a total order (antisymmetric, equal only for equal
// strings, transitive on three), and PickRelease's choice is one of its
// input, not older than any other.
func FuzzCompareReleases(f *testing.F) {
	f.Add("6.1.0-57-cloud-amd64", "6.1.0-9-cloud-amd64", "6.12.0-55.el10.x86_64")
	f.Add("5.15.0-91-generic", "5.15.0-091-generic", "5.15.0-91-lowlatency")
	f.Add("4.4.302+", "4.4.302", "4.4.302~")
	f.Add("", "0", "00")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		sign := func(n int) int {
			switch {
			case n < 0:
				return -1
			case n > 0:
				return 1
			}
			return 0
		}
		ab, ba := sign(CompareReleases(a, b)), sign(CompareReleases(b, a))
		if ab != -ba || (ab == 0) != (a == b) {
			t.Fatalf("%q vs %q: %d, reverse %d", a, b, ab, ba)
		}
		bc, ac := sign(CompareReleases(b, c)), sign(CompareReleases(a, c))
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("%q <= %q <= %q, yet %q > %q", a, b, c, a, c)
		}
		newest, others := PickRelease([]string{a, b, c})
		if newest != a && newest != b && newest != c {
			t.Fatalf("picked %q from %q %q %q", newest, a, b, c)
		}
		for _, o := range append(others, a, b, c) {
			if CompareReleases(o, newest) > 0 {
				t.Fatalf("picked %q, but %q is newer", newest, o)
			}
		}
	})
}
