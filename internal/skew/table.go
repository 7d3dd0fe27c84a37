package skew

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// DataFile names the embedded table in errors and reports.
const DataFile = "internal/skew/images.tsv"

//go:embed images.tsv
var imagesTSV string

// Userland is what one k3s-root release bundles.
type Userland struct {
	K3sRoot string
	// Nft is the bundled nft (unknown when the release has none).
	Nft      Version
	NftJSON  bool
	Iptables Version
	Source   string
}

// Image is the userspace of one RKE2 release's kube-proxy image.
type Image struct {
	Release string // v1.34.2+rke2r1
	Userland
	// ImageSource says how the release was tied to its k3s-root.
	ImageSource string
}

// Pair is one known-bad reader x writer pair.
type Pair struct {
	Reader, Writer Range
	// KubeProxy are the Kubernetes versions whose kube-proxy fails so.
	KubeProxy Ranges
	Source    string
	Fails     string
}

// Table is the parsed data file.
type Table struct {
	K3sRoot map[string]Userland
	Images  map[string]Image
	Pairs   []Pair
}

// Default is the embedded table. TestDefaultTable parses it, so a bad row
// fails the build's tests; were one to slip through, the table is empty
// (nothing judged) rather than a panic on the boot path.
var Default = sync.OnceValue(func() *Table {
	t, err := ParseTable(imagesTSV, DataFile)
	if err != nil {
		return &Table{K3sRoot: map[string]Userland{}, Images: map[string]Image{}}
	}
	return t
})

// columns per row kind, the kind included (0: no such kind).
func columns(kind string) int {
	switch kind {
	case "k3s-root", "pair":
		return 6
	case "image":
		return 4
	}
	return 0
}

// ParseTable reads the data file's text; errors name the file, the line
// and the value.
func ParseTable(text, name string) (*Table, error) {
	t := &Table{K3sRoot: map[string]Userland{}, Images: map[string]Image{}}
	type imageRow struct {
		line         int
		rel, k3sroot string
		source       string
	}
	var images []imageRow
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		want := columns(f[0])
		if want == 0 {
			return nil, fmt.Errorf("%s:%d: row kind %q: want k3s-root, image or pair", name, n, f[0])
		}
		if len(f) != want {
			return nil, fmt.Errorf("%s:%d: a %s row has %d tab-separated columns, want %d", name, n, f[0], len(f), want)
		}
		for j, c := range f {
			if strings.TrimSpace(c) != c || c == "" {
				return nil, fmt.Errorf("%s:%d: column %d (%q) is empty or has spaces around it", name, n, j+1, c)
			}
		}
		switch f[0] {
		case "k3s-root":
			u, err := parseUserland(f)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			if _, dup := t.K3sRoot[u.K3sRoot]; dup {
				return nil, fmt.Errorf("%s:%d: k3s-root %s is listed twice", name, n, u.K3sRoot)
			}
			t.K3sRoot[u.K3sRoot] = u
		case "image":
			if !strings.Contains(f[1], "+rke2r") || !strings.HasPrefix(f[1], "v") {
				return nil, fmt.Errorf("%s:%d: RKE2 release %q: want e.g. v1.34.2+rke2r1", name, n, f[1])
			}
			images = append(images, imageRow{line: n, rel: f[1], k3sroot: f[2], source: f[3]})
		case "pair":
			p, err := parsePair(f)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			t.Pairs = append(t.Pairs, p)
		}
	}
	// Images name a k3s-root that may be listed after them.
	for _, r := range images {
		u, ok := t.K3sRoot[r.k3sroot]
		if !ok {
			return nil, fmt.Errorf("%s:%d: RKE2 release %s names k3s-root %q, which no k3s-root row lists", name, r.line, r.rel, r.k3sroot)
		}
		if _, dup := t.Images[r.rel]; dup {
			return nil, fmt.Errorf("%s:%d: RKE2 release %s is listed twice", name, r.line, r.rel)
		}
		t.Images[r.rel] = Image{Release: r.rel, Userland: u, ImageSource: r.source}
	}
	return t, nil
}

func parseUserland(f []string) (Userland, error) {
	u := Userland{K3sRoot: f[1], Source: f[5]}
	if !strings.HasPrefix(u.K3sRoot, "v") {
		return u, fmt.Errorf("k3s-root version %q: want e.g. v0.15.0", u.K3sRoot)
	}
	var err error
	if f[2] != "none" {
		if u.Nft, err = ParseVersion(f[2]); err != nil {
			return u, fmt.Errorf("nft: %w", err)
		}
	}
	switch f[3] {
	case "yes":
		u.NftJSON = true
	case "no":
	default:
		return u, fmt.Errorf("nft-json %q: want yes or no", f[3])
	}
	if u.Iptables, err = ParseVersion(f[4]); err != nil {
		return u, fmt.Errorf("iptables: %w", err)
	}
	return u, nil
}

func parsePair(f []string) (Pair, error) {
	var p Pair
	var err error
	if p.Reader, err = ParseRange(f[1]); err != nil {
		return p, fmt.Errorf("reader: %w", err)
	}
	if p.Writer, err = ParseRange(f[2]); err != nil {
		return p, fmt.Errorf("writer: %w", err)
	}
	if p.KubeProxy, err = ParseRanges(f[3]); err != nil {
		return p, fmt.Errorf("kube-proxy: %w", err)
	}
	p.Source, p.Fails = f[4], f[5]
	return p, nil
}

// Format writes t as ParseTable reads it (rows sorted, no comments).
func (t *Table) Format() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(t.K3sRoot)) {
		u := t.K3sRoot[k]
		nft := "none"
		if u.Nft.Known() {
			nft = u.Nft.String()
		}
		json := "no"
		if u.NftJSON {
			json = "yes"
		}
		fmt.Fprintf(&b, "k3s-root\t%s\t%s\t%s\t%s\t%s\n", u.K3sRoot, nft, json, u.Iptables, u.Source)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Images)) {
		im := t.Images[k]
		fmt.Fprintf(&b, "image\t%s\t%s\t%s\n", im.Release, im.K3sRoot, im.ImageSource)
	}
	for _, p := range t.Pairs {
		fmt.Fprintf(&b, "pair\t%s\t%s\t%s\t%s\t%s\n", p.Reader, p.Writer, p.KubeProxy, p.Source, p.Fails)
	}
	return b.String()
}

// ImageFor finds an RKE2 release's image ("v1.34.2+rke2r1"); ok is false
// when the table does not list it.
func (t *Table) ImageFor(release string) (Image, bool) {
	im, ok := t.Images[release]
	return im, ok
}
