package skew

import (
	"strings"
	"testing"
)

// The embedded table parses, and rows read from the sources give the
// versions the docs name.
func TestDefaultTable(t *testing.T) {
	tab, err := ParseTable(imagesTSV, DataFile)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"v1.29.15+rke2r1": "1.0.8", // first image with nft (k3s-root v0.14.1)
		"v1.34.0+rke2r1":  "1.0.8", // Dockerfile said v0.15.0, the Makefile's v0.14.1 was built
		"v1.34.1+rke2r1":  "1.1.0", // k3s-root v0.15.0
		"v1.36.1+rke2r2":  "1.1.0",
	} {
		im, ok := tab.ImageFor(rel)
		if !ok || im.Nft.String() != want {
			t.Errorf("%s: image nft %v (listed %v), want %s", rel, im.Nft, ok, want)
		}
	}
	if im, _ := tab.ImageFor("v1.34.1+rke2r1"); !im.NftJSON || im.Iptables.String() != "1.8.11" {
		t.Errorf("v1.34.1+rke2r1: %+v, want nft with JSON and iptables 1.8.11", im)
	}
	if _, ok := tab.ImageFor("v1.28.15+rke2r1"); ok {
		t.Error("v1.28.15+rke2r1 has no nft in its image and must not be listed")
	}
	if len(tab.Pairs) == 0 {
		t.Fatal("no pair rows")
	}
}

func TestParseTableErrors(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"kind":          {"images\tx\n", `t.tsv:1: row kind "images"`},
		"columns":       {"image\tv1.34.1+rke2r1\tv0.15.0\n", "t.tsv:1: a image row has 3 tab-separated columns, want 4"},
		"release":       {"image\t1.34.1\tv0.15.0\tsrc\n", `t.tsv:1: RKE2 release "1.34.1"`},
		"no k3s-root":   {"image\tv1.34.1+rke2r1\tv0.99.0\tsrc\n", `names k3s-root "v0.99.0", which no k3s-root row lists`},
		"nft":           {"# c\nk3s-root\tv0.15.0\t1.1.x\tyes\t1.8.11\tsrc\n", `t.tsv:2: nft: version "1.1.x"`},
		"json":          {"k3s-root\tv0.15.0\t1.1.0\tmaybe\t1.8.11\tsrc\n", `nft-json "maybe"`},
		"range":         {"pair\t1.0.5-1.0.1\t1.1.2-\t*\tsrc\tfails\n", `reader: range "1.0.5-1.0.1": 1.0.5 is after 1.0.1`},
		"empty column":  {"pair\t1.0.1-1.0.5\t \t*\tsrc\tfails\n", "column 3"},
		"duplicate rel": {"k3s-root\tv0.15.0\t1.1.0\tyes\t1.8.11\ts\nimage\tv1.34.1+rke2r1\tv0.15.0\ts\nimage\tv1.34.1+rke2r1\tv0.15.0\ts\n", "v1.34.1+rke2r1 is listed twice"},
	} {
		_, err := ParseTable(tc.text, "t.tsv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to contain %q", name, err, tc.want)
		}
	}
}

// Format writes what ParseTable reads: the embedded table round-trips.
func TestFormatRoundTrip(t *testing.T) {
	tab := Default()
	again, err := ParseTable(tab.Format(), "formatted")
	if err != nil {
		t.Fatal(err)
	}
	if again.Format() != tab.Format() {
		t.Errorf("round trip changed the table:\n%s\nvs\n%s", again.Format(), tab.Format())
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add(imagesTSV)
	f.Add("k3s-root\tv0.15.0\tnone\tno\t1.8.11\ts\nimage\tv1.34.1+rke2r1\tv0.15.0\ts\npair\t-1.1.1\t1.1.2-\t*\ts\tf\n")
	f.Fuzz(func(t *testing.T, text string) {
		tab, err := ParseTable(text, "fuzz")
		if err != nil {
			return
		}
		// Property: an accepted table formats to text that parses to the
		// same table, and every image names a listed k3s-root.
		out := tab.Format()
		again, err := ParseTable(out, "formatted")
		if err != nil {
			t.Fatalf("formatted table does not parse: %v\n%s", err, out)
		}
		if again.Format() != out {
			t.Fatalf("format is not stable:\n%s\nvs\n%s", out, again.Format())
		}
		for rel, im := range tab.Images {
			if _, ok := tab.K3sRoot[im.K3sRoot]; !ok {
				t.Fatalf("%s names unlisted k3s-root %s", rel, im.K3sRoot)
			}
		}
	})
}
