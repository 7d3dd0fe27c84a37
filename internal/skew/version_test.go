package skew

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, ok := range []string{"1", "1.1", "1.0.6.1", "v1.1.3", "0.9.10", "9999.0"} {
		if _, err := ParseVersion(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "v", "1.", ".1", "1..1", "1.0.6.1.2", "1.x", "01.1", "1.-1", "10000", " 1.1", "1.1 ", "+1"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("%q parsed as %v, want an error", bad, v)
		}
	}
}

func TestCompareAndRanges(t *testing.T) {
	order := []string{"0.9.8", "1", "1.0.1", "1.0.5", "1.0.6", "1.0.6.1", "1.0.9", "1.1", "1.1.1", "1.1.2", "1.1.10", "2"}
	for i := range order {
		for j := range order {
			got := MustVersion(order[i]).Compare(MustVersion(order[j]))
			want := map[bool]int{true: -1, false: 1}[i < j]
			if i == j {
				want = 0
			}
			if got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if MustVersion("1.1").Compare(MustVersion("1.1.0")) != 0 {
		t.Error("1.1 and 1.1.0 must compare equal")
	}
	for _, tc := range []struct {
		r, v string
		in   bool
	}{
		{"1.0.1-1.0.5", "1.0.4", true}, {"1.0.1-1.0.5", "1.0.6", false}, {"1.0.1-1.0.5", "1.0.1", true},
		{"1.1.2-", "1.1.2", true}, {"1.1.2-", "1.1.1", false}, {"1.1.2-", "2.0", true},
		{"-1.1.1", "1.0.8", true}, {"-1.1.1", "1.1.2", false},
		{"1.0.6.1", "1.0.6.1", true}, {"1.0.6.1", "1.0.6", false},
	} {
		r, err := ParseRange(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Contains(MustVersion(tc.v)); got != tc.in {
			t.Errorf("%s contains %s = %v, want %v", tc.r, tc.v, got, tc.in)
		}
		if r.String() != tc.r {
			t.Errorf("range %q writes back as %q", tc.r, r.String())
		}
	}
	rs, err := ParseRanges("-1.33.10,1.34.0-1.34.6")
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Contains(MustVersion("1.32.5")) || !rs.Contains(MustVersion("1.34.6")) || rs.Contains(MustVersion("1.33.11")) || rs.Contains(MustVersion("1.34.7")) || rs.Contains(Version{}) {
		t.Errorf("ranges %s hold the wrong versions", rs)
	}
	all, _ := ParseRanges("*")
	if !all.Contains(Version{}) || all.String() != "*" {
		t.Error(`"*" must hold every version, unknown included`)
	}
}

// FuzzParseVersion: a parsed version writes back as the same text (less a
// leading v), its parts are what the text says, and Compare orders it as
// the padded integer parts do.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.0.6.1", "v1.1.3", "0", "1.1", "9999.9999.9999.9999", "1..2", "01"} {
		f.Add(s, "1.1.2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err := ParseVersion(a)
		if err != nil {
			return
		}
		if got := va.String(); got != strings.TrimPrefix(a, "v") {
			t.Fatalf("ParseVersion(%q).String() = %q", a, got)
		}
		again, err := ParseVersion(va.String())
		if err != nil || again != va {
			t.Fatalf("round trip of %q: %v, %v", a, again, err)
		}
		vb, err := ParseVersion(b)
		if err != nil {
			return
		}
		want := comparePadded(t, va.String(), vb.String())
		if got := va.Compare(vb); got != want {
			t.Fatalf("Compare(%s, %s) = %d, want %d", va, vb, got, want)
		}
		if vb.Compare(va) != -want {
			t.Fatalf("Compare is not antisymmetric on %s, %s", va, vb)
		}
		r := Range{From: va, To: va}
		if !r.Contains(va) || r.Contains(vb) != (want == 0) {
			t.Fatalf("single-release range %s holds the wrong versions", r)
		}
	})
}

func comparePadded(t *testing.T, a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 4 {
		x, y := 0, 0
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
