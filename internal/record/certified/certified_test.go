package certified

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func sample() Record {
	return Record{Schema: Schema, Tool: "0.2.0", Verdict: Runnable, Why: "the image can run iptables-nft", Backend: "iptables-nft", Asked: "auto",
		Kernel: Kernel{Release: "6.1.0-57-cloud-amd64", Modules: []string{"ip_tables", "nf_tables", "nft_compat"}},
		Backends: []Backend{
			{Name: "iptables-legacy", Runnable: true, Confirmed: true},
			{Name: "iptables-nft", Runnable: true, Confirmed: true},
			{Name: "nftables", Runnable: false, Reasons: []string{"RKE2's version is unknown."}},
		}}
}

// The machine the image was certified for differs in nothing; another
// kernel, a module gone, a certified backend that no longer runs are each
// said, and a backend that was never runnable is not.
func TestDifferences(t *testing.T) {
	r := sample()
	same := Machine{Release: "6.1.0-57-cloud-amd64", Has: func(string) bool { return true }, NotRunnable: map[string]string{"nftables": "no"}}
	if d := r.Differences(same); len(d) != 0 || r.Notice(same) != "" {
		t.Errorf("the certified machine differs: %q", d)
	}
	other := Machine{Release: "6.12.9-cloud-amd64", Has: func(m string) bool { return m != "nf_tables" && m != "nft_compat" },
		NotRunnable: map[string]string{"iptables-nft": "the kernel has no nf_tables module", "nftables": "no"}}
	d := r.Differences(other)
	want := []string{
		"it boots kernel 6.12.9-cloud-amd64, the image was certified for 6.1.0-57-cloud-amd64",
		"nf_tables, nft_compat, which the certified kernel had, are not in this kernel",
		"iptables-nft, certified runnable, is not: the kernel has no nf_tables module",
	}
	if !slices.Equal(d, want) {
		t.Errorf("differences\n%q\nwant\n%q", d, want)
	}
	if n := r.Notice(other); !strings.Contains(n, File) || !strings.Contains(n, strings.Join(want, "; ")) || strings.Contains(n, "\n") {
		t.Errorf("notice %q: want one line naming the record and every difference", n)
	}
	// A module tree that cannot be read says nothing about modules.
	if d := r.Differences(Machine{Release: "6.1.0-57-cloud-amd64"}); len(d) != 0 {
		t.Errorf("unknown module tree: %q", d)
	}
}

// Written atomically where certify puts it, and read back the same; a
// schema this version does not know, or no schema, is refused.
func TestWriteRead(t *testing.T) {
	root := hostfs.New(t.TempDir())
	if _, found, err := Read(root); found || err != nil {
		t.Fatalf("nothing written: found %v, %v", found, err)
	}
	if err := Write(root, sample()); err != nil {
		t.Fatal(err)
	}
	got, found, err := Read(root)
	if !found || err != nil || !reflect.DeepEqual(got, sample()) {
		t.Fatalf("read back %+v, %v, %v", got, found, err)
	}
	for _, bad := range []string{`{"schema": 2}`, `{"verdict": "runnable"}`, `not json`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

// Property: whatever Parse accepts, Marshal writes and Parse reads back the
// same; nothing panics.
func FuzzParse(f *testing.F) {
	good, _ := Marshal(sample())
	f.Add(good)
	f.Add([]byte(`{"schema":1,"kernel":{"modules":null}}`))
	f.Add([]byte(`{"schema":1.5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := Parse(again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed %+v into %+v (%v)", r, r2, err)
		}
		var anyDoc map[string]any
		if json.Unmarshal(again, &anyDoc) != nil {
			t.Fatal("Marshal wrote invalid JSON")
		}
	})
}
