package facts

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The version a build embeds is found wherever it sits, across the
// chunks the scan reads; distinct ones are all returned, so several mean
// "unknown" to the caller.
func TestScanVersions(t *testing.T) {
	pad := bytes.Repeat([]byte{0}, 1<<20-7) // puts the first across a chunk boundary
	data := append(append(pad, "v1.31.2+rke2r1 ... v1.31.2+rke2r1"...), "\x00v1.30.1+k3s2\x00v1.2+rke2r1"...)
	got, err := scanVersions(bytes.NewReader(data))
	if err != nil || !slices.Equal(got, []string{"v1.31.2+rke2r1", "v1.30.1+k3s2"}) {
		t.Errorf("scanVersions = %q, %v", got, err)
	}
	if got, _ := scanVersions(strings.NewReader("no version here")); len(got) != 0 {
		t.Errorf("found %q in none", got)
	}
}

func FuzzScanVersions(f *testing.F) {
	f.Add([]byte("x v1.34.12+rke2r1 y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := scanVersions(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got {
			if !bytes.Contains(data, []byte(v)) || !embeddedVersion().MatchString(v) {
				t.Fatalf("%q is not a version in the input", v)
			}
		}
	})
}
